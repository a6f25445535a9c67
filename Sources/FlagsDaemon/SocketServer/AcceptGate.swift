import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The listening socket and who gets through it: accepts new connections within `MaxConnections`, refuses
/// the rest (logged through a `LogThrottle`), and pauses accepting while the daemon is out of descriptors.
///
/// Owned by the server loop's thread.
final class AcceptGate {
    /// The listening socket, or -1 once closed (draining).
    private(set) var listenFD: Int32
    /// Set while the daemon is out of descriptors: the listening socket is left out of epoll until then.
    private(set) var pausedUntil: UInt64?
    private let epoll: Epoll
    private let logger: Logger
    private var refusedConnections = LogThrottle()
    private var lastDescriptorLog: UInt64 = 0

    init(listenFD: Int32, epoll: Epoll, logger: Logger) {
        self.listenFD = listenFD
        self.epoll = epoll
        self.logger = logger
    }

    /// Accepts every connection waiting in the backlog. `hasRoom` says whether one more may open (it may close
    /// connections whose peers left); `open` takes each admitted descriptor, non-blocking, with its peer.
    func acceptWaiting(
        maxConnections: Int, hasRoom: () -> Bool, open: (Int32, PeerCredentials) -> Void
    ) {
        guard listenFD >= 0 else { return }
        while true {
            let fd: Int32
            do {
                guard let accepted = try UnixSocket.accept(listenFD) else { return }
                fd = accepted
            } catch {
                switch error.errno {
                case ECONNABORTED: continue
                case EMFILE, ENFILE:
                    pause()
                    return
                default:
                    logger.warning("accept failed", ["ERRNO": String(error.errno)])
                    return
                }
            }
            guard hasRoom() else {
                Glibc.close(fd)
                noteRefused(maxConnections: maxConnections)
                continue
            }
            // accept4 is hidden behind _GNU_SOURCE; two fcntl calls per connection cost nothing that matters.
            _ = try? Descriptor.setCloseOnExec(fd)
            guard (try? UnixSocket.setNonBlocking(fd)) != nil, let peer = try? UnixSocket.peerCredentials(fd) else {
                Glibc.close(fd)
                continue
            }
            open(fd, peer)
        }
    }

    /// Out of descriptors: the listening socket stays readable, so epoll would wake the loop again at once (a
    /// busy loop and a log line each time). It leaves epoll until a connection closes or 100 ms pass; the
    /// waiting connections stay in the backlog. Logged at most once a second.
    private func pause() {
        let now = ServerLoop.now()
        if pausedUntil == nil, listenFD >= 0 {
            try? epoll.modify(listenFD, events: [])
        }
        pausedUntil = now + 100_000_000
        guard now - lastDescriptorLog >= 1_000_000_000 else { return }
        lastDescriptorLog = now
        logger.error("out of file descriptors; new connections wait in the backlog")
    }

    /// Puts the listening socket back into epoll after a pause (a descriptor is free again, or time passed).
    func resume() {
        guard pausedUntil != nil else { return }
        pausedUntil = nil
        guard listenFD >= 0 else { return }
        try? epoll.modify(listenFD, events: .input)
    }

    /// Stops accepting for good: new connections are refused by the kernel from now on.
    func stop() {
        guard listenFD >= 0 else { return }
        epoll.remove(listenFD)
        Glibc.close(listenFD)
        listenFD = -1
    }

    /// Logs refusals past `MaxConnections` at most once a second, so a flood cannot flood the journal too.
    private func noteRefused(maxConnections: Int) {
        guard let count = refusedConnections.record(now: ServerLoop.now()) else { return }
        logger.warning(
            "refused connections past MaxConnections",
            ["CONNECTIONS_REFUSED": String(count), "MAX_CONNECTIONS": String(maxConnections)]
        )
    }
}
