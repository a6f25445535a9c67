import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// One listener on the daemon's event loop, with a `ConnectionHandler` for its protocol: the line socket,
/// Varlink and OFREP each have one, and all run on the loop's one thread.
///
/// The engine owns what every protocol shares: the listening socket and its `AcceptGate` (the connection
/// limit, refusals, the pause when descriptors run out), the connection table, the output queue's sending and
/// the epoll interest, the watchdog heartbeat, deadlines (the handler's and its own) and the drain at shutdown.
/// Everything it holds is touched by the loop's thread only; other threads post to the handler and ring the
/// loop's `doorbell`.
final class EventEngine<Handler: ConnectionHandler>: JoiningMember, @unchecked Sendable {
    typealias Connection = Handler.Connection

    /// A callback run on the loop thread every `interval` (the systemd watchdog), so that a hung loop stops it.
    struct Heartbeat: Sendable {
        let interval: Duration
        let action: @Sendable () -> Void
    }

    enum Phase {
        case running
        case draining(deadline: UInt64)
    }

    let loop: EventLoop
    let gate: AcceptGate
    let handler: Handler
    let logger: Logger
    private let heartbeat: Heartbeat?
    private let logPrefix: String

    // Loop thread only.
    /// The engine's hold on the loop, from `start` until it finished.
    private var membership: EventLoop.Membership?
    private var finished: (@Sendable () -> Void)?
    /// `finished` as `start` was given it, until the loop's thread takes it.
    private let startedWith = Locked<(@Sendable () -> Void)?>(nil)
    /// Unchecked at run time, as `EventLoop` says of the request path's state.
    @exclusivity(unchecked) var connections = DescriptorTable<Connection>()
    /// The number the next connection gets: unique for the engine's life, in the order they were accepted (file
    /// descriptors are reused, ids are not).
    private var nextConnectionID: UInt64 = 1
    /// Each peer user's share of `connections`, as the flag service rules it (`ConnectionShare`).
    var share: any SlotShare
    private var refusedShares = LogThrottle()
    private(set) var phase = Phase.running
    /// The engine's one read buffer, lent to the handler for each read (unchecked, as `EventLoop` says).
    @exclusivity(unchecked) var readBuffer = [UInt8](repeating: 0, count: 65536)
    /// A buffer for `reapHangups`, which waits while the loop still reads its own.
    private let hangups = Epoll.Buffer(capacity: 256)
    private var listenReady = false
    private var nextBeat: UInt64?

    /// Serves `listenFD`, a listening socket the engine now owns and closes at the end, on `loop` once
    /// started; `share` is who may take its slots; `makeHandler` builds the handler with the loop's doorbell. Throws when the loop is missing or
    /// refuses the socket, or the handler cannot be built; the socket is then left out of the loop.
    init(
        listenFD: Int32, loop: EventLoop? = EventLoop.shared, share: some SlotShare, logger: Logger,
        logPrefix: String = "", heartbeat: Heartbeat? = nil, makeHandler: (Doorbell) throws(SystemError) -> Handler
    ) throws(SystemError) {
        guard let loop else { throw SystemError("epoll_create1", errno: EMFILE) }
        // Added now, with no events, so that a socket epoll refuses fails here; `start` asks for its events.
        try loop.epoll.add(listenFD, events: [])
        do {
            self.handler = try makeHandler(loop.doorbell)
        } catch {
            loop.epoll.remove(listenFD)
            throw error
        }
        self.loop = loop
        self.share = share
        self.logger = logger
        self.logPrefix = logPrefix
        self.heartbeat = heartbeat
        self.gate = AcceptGate(listenFD: listenFD, epoll: loop.epoll, logger: logger, logPrefix: logPrefix)
        handler.engine = self
    }

    var isDraining: Bool {
        if case .draining = phase { return true }
        return false
    }

    // MARK: On the loop

    /// Joins the loop and serves until the drain has closed every connection (or its deadline passed); then
    /// closes the listening socket and every connection, and calls `finished` on the loop's thread.
    func start(finished: @escaping @Sendable () -> Void) {
        startedWith.withLock { $0 = finished }
        loop.start(self)
    }

    func joinLoop() {
        finished = startedWith.withLock { $0.take() }
        guard let membership = loop.join(self) else {
            return loopFailed(loop.failure ?? SystemError("epoll_wait", errno: EBADF))
        }
        self.membership = membership
        membership.own(gate.listenFD)
        do throws(SystemError) {
            try membership.modify(gate.listenFD, events: .input)
        } catch {
            logger.error(
                logPrefix + "cannot wait for connections; the server stops", ["ERRNO": String(error.errno)])
            finish()
            return
        }
        nextBeat = heartbeat.map { EngineClock.now() + EngineClock.nanoseconds($0.interval) }
        heartbeat?.action()
    }

    func handle(_ events: Epoll.Events, on descriptor: Int32) {
        if descriptor == gate.listenFD {
            // Accepted in `tick`, after the round: a slot its peer gave up is free for the client behind it.
            listenReady = true
        } else if let connection = connections[descriptor] {
            handler.handle(events, on: connection)
        }
    }

    func woke() {
        handler.woke()
    }

    func nextDeadline() -> UInt64? {
        var earliest = handler.nextDeadline() ?? .max
        if let beat = nextBeat { earliest = min(earliest, beat) }
        if case .draining(let deadline) = phase { earliest = min(earliest, deadline) }
        if let paused = gate.pausedUntil { earliest = min(earliest, paused) }
        return earliest == .max ? nil : earliest
    }

    func tick(now: UInt64) {
        guard membership != nil else { return }
        if listenReady {
            listenReady = false
            acceptConnections()
        }
        if let paused = gate.pausedUntil, now >= paused { gate.resume() }
        if let beat = nextBeat, let heartbeat, now >= beat {
            heartbeat.action()
            nextBeat = now + EngineClock.nanoseconds(heartbeat.interval)
        }
        handler.tick(now: now)
        if case .draining(let deadline) = phase, connections.isEmpty || now >= deadline { finish() }
    }

    func loopFailed(_ error: SystemError) {
        logger.error(logPrefix + "epoll_wait failed; the server stops", ["ERRNO": String(error.errno)])
        finish()
    }

    /// The engine's membership, while it serves (a connection is set up only then).
    func membershipOrThrow() throws(SystemError) -> EventLoop.Membership {
        guard let membership else { throw SystemError("epoll_ctl", errno: EBADF) }
        return membership
    }

    /// Stops waiting on a connection's descriptor, before it is closed.
    func removeFromLoop(_ descriptor: Int32) {
        if let membership {
            membership.remove(descriptor)
        } else {
            loop.epoll.remove(descriptor)
        }
    }

    /// Closes every connection and the listening socket, and leaves the loop.
    private func finish() {
        for connection in Array(connections.values) { close(connection) }
        // Out of the loop before the descriptor closes, so that its number, once reused, is nobody's.
        membership?.remove(gate.listenFD)
        gate.stop()
        handler.stopped()
        membership?.leave()
        membership = nil
        let finished = self.finished
        self.finished = nil
        finished?()
    }

    /// Stops accepting and gives the connections until `timeout` nanoseconds from now to finish.
    func beginDraining(timeout: UInt64) {
        guard case .running = phase else { return }
        phase = .draining(deadline: EngineClock.now() + timeout)
        membership?.remove(gate.listenFD)
        gate.stop()
        handler.drainStarted()
    }

    private func acceptConnections() {
        gate.acceptWaiting {
            if connections.count >= handler.maxConnections { handler.makeRoom() }
            guard connections.count < handler.maxConnections, case .running = phase else { return false }
            return true
        } refuse: { fd, logCount in
            handler.refuse(fd, logCount: logCount)
        } open: { fd in
            guard let connection = handler.open(fd, id: nextConnectionID) else { return false }
            nextConnectionID += 1
            if let uid = connection.peerUID, !share.admits(uid, capacity: handler.maxConnections) {
                if let count = refusedShares.record(now: EngineClock.now()) {
                    logger.warning(
                        logPrefix + "refused connections of a user past its share of the connections",
                        [
                            "PEER_UID": String(uid), "CONNECTIONS_REFUSED": String(count),
                            "USER_SHARE": String(share.perUser(of: handler.maxConnections)),
                        ])
                }
                handler.refuse(fd, logCount: nil)
                return false
            }
            share.opened(connection.peerUID)
            connections[fd] = connection
            loop.openConnections += 1
            handler.settle(connection)
            return true
        }
    }

    /// At the limit, handles the connections whose peers left since the last wait, without waiting: a peer that
    /// closed its end right before another connected must not keep its slot from that one.
    func reapHangups() {
        let count = (try? loop.epoll.wait(into: hangups, timeout: 0)) ?? 0
        for index in 0..<count {
            let event = hangups[index]
            guard !event.events.isDisjoint(with: [.readHangup, .hangup, .error]),
                let connection = connections[event.descriptor]
            else { continue }
            handler.handle(event.events, on: connection)
        }
    }
}

extension EventEngine {
    var surfaceGauge: SurfaceGauge? {
        SurfaceGauge(surface: Handler.surface, connections: connections.count, listens: handler.listenCount)
    }
}
