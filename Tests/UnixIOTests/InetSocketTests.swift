import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The OFREP listener's TCP: a loopback listener with the flags the daemon relies on, a connection to it, and what
/// an accepted or inherited socket says about itself.
@Suite(.hangLimit) struct InetSocketTests {
    /// Accepts one connection on the non-blocking `listener`, waiting for it with poll(2) up to 10 s.
    static func accept(_ listener: Int32) throws -> Int32 {
        var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        try #require(poll(&ready, 1, 10_000) == 1)
        return try #require(try UnixSocket.accept(listener))
    }

    @Test func aLoopbackListenerIsNonBlockingCloseOnExecAndTellsItsAddress() throws {
        let listener = try InetSocket.listen(host: "127.0.0.1", port: 0)
        defer { close(listener) }
        #expect(fcntl(listener, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(listener, F_GETFD) & FD_CLOEXEC != 0)
        #expect(InetSocket.family(listener) == AF_INET)
        #expect(InetSocket.localHost(listener) == "127.0.0.1")
        #expect((InetSocket.localPort(listener) ?? 0) > 0)
        // A listener has no peer.
        #expect(InetSocket.peerHost(listener) == nil)
    }

    @Test func aClientConnectsWithNoDelayAndBothEndsSeeEachOther() throws {
        let listener = try InetSocket.listen(host: "127.0.0.1", port: 0)
        defer { close(listener) }
        let port = try #require(InetSocket.localPort(listener))
        let client = try InetSocket.connect(host: "127.0.0.1", port: port)
        defer { close(client) }
        let accepted = try Self.accept(listener)
        defer { close(accepted) }
        var noDelay: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, &length) == 0 && noDelay == 1)
        #expect(InetSocket.peerHost(accepted) == "127.0.0.1")
        #expect(InetSocket.localPort(accepted) == port)
        try UnixSocket.writeAll(client, Array("ping".utf8))
        #expect(try UnixSocket.read(accepted) == Array("ping".utf8))
    }

    @Test func setNoDelayTurnsNagleOffOnAnAcceptedSocket() throws {
        let listener = try InetSocket.listen(host: "127.0.0.1", port: 0)
        defer { close(listener) }
        let client = try InetSocket.connect(host: "127.0.0.1", port: try #require(InetSocket.localPort(listener)))
        defer { close(client) }
        let accepted = try Self.accept(listener)
        defer { close(accepted) }
        InetSocket.setNoDelay(accepted)
        var noDelay: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(accepted, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, &length) == 0 && noDelay == 1)
    }

    @Test func anIPv6LoopbackListenerTellsItsAddressWhereTheKernelHasIPv6() throws {
        let opened = Result { () throws(SystemError) in try InetSocket.listen(host: "::1", port: 0) }
        // No IPv6 on this machine: nothing to check.
        if case .failure(let error) = opened, [EAFNOSUPPORT, EADDRNOTAVAIL].contains(error.errno) { return }
        let listener = try opened.get()
        defer { close(listener) }
        #expect(InetSocket.family(listener) == AF_INET6)
        #expect(InetSocket.localHost(listener) == "::1")
        #expect((InetSocket.localPort(listener) ?? 0) > 0)
    }

    @Test(arguments: ["localhost", "", "127.0.0.256", "::g"])
    func aNameOrABadAddressIsRefused(host: String) throws {
        #expect(throws: SystemError.self) { try InetSocket.listen(host: host, port: 0) }
    }

    @Test func aPortInUseIsRefusedAndAClosedOneCannotBeReached() throws {
        let listener = try InetSocket.listen(host: "127.0.0.1", port: 0)
        let port = try #require(InetSocket.localPort(listener))
        switch Result(catching: { () throws(SystemError) in try InetSocket.listen(host: "127.0.0.1", port: port) }) {
        case .success(let second):
            close(second)
            Issue.record("a second listener took port \(port)")
        case .failure(let error):
            #expect(error.errno == EADDRINUSE)
        }
        close(listener)
        #expect(throws: SystemError.self) { try InetSocket.connect(host: "127.0.0.1", port: port) }
    }

    @Test func theFamilyOfWhatIsNotATCPSocket() throws {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        #expect(InetSocket.family(fds[0]) == AF_UNIX)
        #expect(InetSocket.localPort(fds[0]) == nil && InetSocket.localHost(fds[0]) == nil)
        close(fds[0])
        close(fds[1])
        var pipeFDs: [Int32] = [-1, -1]
        try #require(pipe(&pipeFDs) == 0)
        #expect(InetSocket.family(pipeFDs[0]) == nil)
        close(pipeFDs[0])
        close(pipeFDs[1])
    }
}
