import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Non-blocking sends: "would block" when the peer's buffer is full, an error (never SIGPIPE) when it is gone.
@Suite(.hangLimit) struct SendingTests {
    /// A connected pair of stream sockets, the first non-blocking.
    static func pair() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0)
        try UnixSocket.setNonBlocking(fds[0])
        return (fds[0], fds[1])
    }

    @Test("A full socket buffer is reported as wouldBlock, not as a failure")
    func wouldBlock() throws {
        let (sender, receiver) = try Self.pair()
        defer {
            close(sender)
            close(receiver)
        }
        let chunk = [UInt8](repeating: 0x61, count: 65536)
        var outcome = SendOutcome.sent(0)
        for _ in 0..<1000 {
            outcome = chunk.withUnsafeBytes { UnixSocket.send(sender, $0) }
            guard case .sent = outcome else { break }
        }
        #expect(outcome == .wouldBlock)
    }

    @Test("Gathered buffers arrive in order, as one stream")
    func gathersInOrder() throws {
        let (sender, receiver) = try Self.pair()
        defer {
            close(sender)
            close(receiver)
        }
        let parts = ["one ", "two ", "three"].map { Array($0.utf8) }
        let pointers = parts.map { part in
            let pointer = UnsafeMutableRawBufferPointer.allocate(byteCount: part.count, alignment: 1)
            pointer.copyBytes(from: part)
            return UnsafeRawBufferPointer(pointer)
        }
        defer { pointers.forEach { $0.deallocate() } }
        #expect(UnixSocket.send(sender, gathering: pointers.count) { pointers[$0] } == .sent(13))
        #expect(try UnixSocket.read(receiver) == Array("one two three".utf8))
    }

    @Test("Sending to a peer that closed fails with EPIPE instead of raising SIGPIPE")
    func closedPeer() throws {
        let (sender, receiver) = try Self.pair()
        defer { close(sender) }
        close(receiver)
        // Without MSG_NOSIGNAL the default SIGPIPE action would end the test process here.
        let outcome = [UInt8]([1]).withUnsafeBytes { UnixSocket.send(sender, $0) }
        #expect(outcome == .failed(SystemError("send", errno: EPIPE)))
        #expect(throws: SystemError("send", errno: EPIPE)) { try UnixSocket.sendAll(sender, [1, 2, 3]) }
    }

    @Test("A datagram to a socket nobody bound fails; to a bound one, it arrives")
    func datagram() throws {
        let receiver = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(receiver >= 0)
        defer { close(receiver) }
        let name = "pwflagsd-unixio-\(UInt32.random(in: 0..<UInt32.max))"
        // An abstract address: a zero byte, then the name, no terminating zero.
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: [0] + Array(name.utf8)) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + 1 + name.utf8.count)
        let bytes = withUnsafeBytes(of: &address) { Array($0) }
        let before = UnixSocket.sendDatagram([1], to: bytes, length: length, blocking: false)
        #expect(before == .failed(SystemError("sendto", errno: ECONNREFUSED)))
        let bound = bytes.withUnsafeBytes {
            bind(receiver, $0.baseAddress?.assumingMemoryBound(to: sockaddr.self), length)
        }
        try #require(bound == 0)
        #expect(UnixSocket.sendDatagram(Array("READY=1".utf8), to: bytes, length: length, blocking: false) == .sent(7))
        #expect(try UnixSocket.read(receiver) == Array("READY=1".utf8))
    }
}
