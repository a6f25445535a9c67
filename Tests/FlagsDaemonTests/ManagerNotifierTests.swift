import Foundation
import TestSupport
import Testing

@testable import FlagsDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The `$NOTIFY_SOCKET` forms libsystemd accepts: a path, or `@` for an abstract name.
@Suite(.hangLimit) struct ManagerNotifierTests {
    @Test("An abstract NOTIFY_SOCKET (@name) receives the message")
    func abstractSocket() throws {
        let name = "pwflagsd-test-\(UInt32.random(in: 0..<UInt32.max))"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        let address = try #require(ManagerNotifier.socketAddress("@" + name))
        let bound = address.bytes.withUnsafeBytes { raw in
            bind(fd, raw.baseAddress?.assumingMemoryBound(to: sockaddr.self), address.length)
        }
        try #require(bound == 0)
        ManagerNotifier(environment: ["NOTIFY_SOCKET": "@" + name]).send("READY=1\nSTATUS=test")
        var buffer = [UInt8](repeating: 0, count: 256)
        let size = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        #expect(size > 0 && String(decoding: buffer[0..<size], as: UTF8.self) == "READY=1\nSTATUS=test")
    }

    @Test("Addresses: a path has its terminating zero, an abstract name none; other forms are refused")
    func addresses() throws {
        let path = try #require(ManagerNotifier.socketAddress("/run/systemd/notify"))
        #expect(Int(path.length) == MemoryLayout<sa_family_t>.size + "/run/systemd/notify".utf8.count + 1)
        let abstract = try #require(ManagerNotifier.socketAddress("@n"))
        #expect(Int(abstract.length) == MemoryLayout<sa_family_t>.size + 2)
        #expect(ManagerNotifier.socketAddress("vsock:2:1234") == nil)
        #expect(ManagerNotifier.socketAddress("relative") == nil)
        #expect(ManagerNotifier.socketAddress("/" + String(repeating: "x", count: 200)) == nil)
    }
}
