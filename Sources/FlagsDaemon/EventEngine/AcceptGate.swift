import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The listening socket and who gets through it: accepts new connections while there is room, refuses the
/// rest (a log line at most once a second, through a `LogThrottle`), and pauses accepting while the daemon is
/// out of descriptors.
///
/// Owned by the event loop's thread.
final class AcceptGate {
    /// The listening socket, or -1 once closed (draining).
    private(set) var listenFD: Int32
    /// Set while accepting is paused: the listening socket is silent in epoll until then.
    private(set) var pausedUntil: UInt64?
    private let epoll: Epoll
    private let logger: Logger
    /// Put before each log message (`OFREP: `), so the journal tells the listeners apart.
    private let logPrefix: String
    private var refusedConnections = LogThrottle()
    private var lastPauseLog: UInt64 = 0

    init(listenFD: Int32, epoll: Epoll, logger: Logger, logPrefix: String) {
        self.listenFD = listenFD
        self.epoll = epoll
        self.logger = logger
        self.logPrefix = logPrefix
    }

    /// Accepts every connection waiting in the backlog. `hasRoom` says whether one more may open (it may close
    /// connections to make room); `refuse` takes each descriptor past it before it is closed, with the number
    /// of refusals a log line due now stands for (nil: none is due); `open` takes each admitted descriptor
    /// (non-blocking, close-on-exec) and says whether it kept it.
    func acceptWaiting(hasRoom: () -> Bool, refuse: (Int32, Int?) -> Void, open: (Int32) -> Bool) {
        guard listenFD >= 0 else { return }
        while true {
            let fd: Int32
            do {
                guard let accepted = try UnixSocket.accept(listenFD) else { return }
                fd = accepted
            } catch {
                // A client that gave up while queued: take the next one.
                if error.errno == ECONNABORTED { continue }
                pause(errno: error.errno)
                return
            }
            guard hasRoom() else {
                refuse(fd, refusedConnections.record(now: EngineClock.now()))
                Glibc.close(fd)
                continue
            }
            // accept4 is hidden behind _GNU_SOURCE; two fcntl calls per connection cost nothing that matters.
            guard (try? Descriptor.setCloseOnExec(fd)) != nil, (try? UnixSocket.setNonBlocking(fd)) != nil,
                open(fd)
            else {
                Glibc.close(fd)
                continue
            }
        }
    }

    /// Out of descriptors (or a failure that would repeat): the listening socket stays readable, so epoll would
    /// wake the loop again at once (a busy loop and a log line each time). It goes silent until a connection
    /// closes or 100 ms pass; the waiting connections stay in the backlog. Logged at most once a second.
    private func pause(errno: Int32) {
        let now = EngineClock.now()
        if pausedUntil == nil, listenFD >= 0 {
            try? epoll.modify(listenFD, events: [])
        }
        pausedUntil = now + 100_000_000
        guard now - lastPauseLog >= 1_000_000_000 else { return }
        lastPauseLog = now
        if errno == EMFILE || errno == ENFILE {
            logger.error(logPrefix + "out of file descriptors; new connections wait in the backlog")
        } else {
            logger.warning(logPrefix + "accept failed; not accepting for 100 ms", ["ERRNO": String(errno)])
        }
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
}
