import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// `sockaddr_un` built once with its length check: what fits in `sun_path`, and the bytes and length lent out.
@Suite(.hangLimit) struct UnixSocketAddressTests {
    @Test func aPathFitsWithItsTerminatingZeroOrIsRefused() throws {
        #expect(UnixSocketAddress.maximumPathLength == 107)
        let longest = "/" + String(repeating: "p", count: UnixSocketAddress.maximumPathLength - 1)
        #expect(try UnixSocketAddress(path: longest).path == longest)
        #expect(throws: SystemError("socket path '\(longest)p'", errno: ENAMETOOLONG)) {
            try UnixSocketAddress(path: longest + "p")
        }
        #expect(throws: SystemError.self) { try UnixSocketAddress(path: "") }
    }

    @Test func theAddressLentOutIsAUnixFamilyWithThePathAndItsZero() throws {
        let address = try UnixSocketAddress(path: "/run/pwflagsd.sock")
        let (family, length, path) = address.withSockaddr { pointer, length in
            pointer.withMemoryRebound(to: sockaddr_un.self, capacity: 1) { un in
                let path = withUnsafeBytes(of: un.pointee.sun_path) { Array($0.prefix { $0 != 0 }) }
                return (Int32(un.pointee.sun_family), Int(length), path)
            }
        }
        #expect(family == AF_UNIX)
        #expect(length == MemoryLayout<sa_family_t>.size + "/run/pwflagsd.sock".utf8.count + 1)
        #expect(path == Array("/run/pwflagsd.sock".utf8))
    }

    @Test func aNotifySocketIsAPathOrAnAbstractName() throws {
        let path = try #require(UnixSocketAddress.rawAddress("/run/systemd/notify"))
        #expect(Int(path.length) == MemoryLayout<sa_family_t>.size + "/run/systemd/notify".utf8.count + 1)
        let abstract = try #require(UnixSocketAddress.rawAddress("@manager"))
        // An abstract name is its bytes after a leading zero, with no terminating zero.
        #expect(Int(abstract.length) == MemoryLayout<sa_family_t>.size + "@manager".utf8.count)
        let offset = MemoryLayout<sa_family_t>.size
        #expect(abstract.bytes[offset] == 0 && abstract.bytes[offset + 1] == UInt8(ascii: "m"))
        #expect(UnixSocketAddress.rawAddress("vsock:2:1234") == nil)
        #expect(UnixSocketAddress.rawAddress("/") == nil)
        #expect(UnixSocketAddress.rawAddress("/" + String(repeating: "x", count: 200)) == nil)
    }
}
