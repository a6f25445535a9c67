import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// One thread, epoll, non-blocking sockets: the event loop both listeners run on, with a `ConnectionHandler`
/// per protocol.
///
/// The engine owns what every protocol shares: the listening socket and its `AcceptGate` (the connection
/// limit, refusals, the pause when descriptors run out), the connection table, the output queue's sending and
/// the epoll interest, a doorbell other threads ring, the watchdog heartbeat, deadlines (the handler's and its
/// own) and the drain at shutdown. Everything it holds is touched by its thread only; other threads ring
/// `doorbell`.
final class EventEngine<Handler: ConnectionHandler>: @unchecked Sendable {
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

    let doorbell: Doorbell
    let epoll: Epoll
    let gate: AcceptGate
    let handler: Handler
    let logger: Logger
    private let wake: EventFD
    private let heartbeat: Heartbeat?
    private let logPrefix: String

    // Loop thread only.
    var connections: [Int32: Connection] = [:]
    /// Each peer user's share of `connections` (ConnectionShare).
    var share = ConnectionShare()
    private var refusedShares = LogThrottle()
    private(set) var phase = Phase.running
    /// The loop's one read buffer, lent to the handler for each read.
    var readBuffer = [UInt8](repeating: 0, count: 65536)
    private let events = Epoll.Buffer(capacity: 256)
    /// A second buffer for `reapHangups`, which waits while the loop still reads `events`.
    private let hangups = Epoll.Buffer(capacity: 64)

    /// Serves `listenFD`, a listening socket the engine now owns and closes at the end; `makeHandler` builds the
    /// handler with the doorbell. Whatever step fails, nothing made before it is left open.
    init(
        listenFD: Int32, logger: Logger, logPrefix: String = "", heartbeat: Heartbeat? = nil,
        makeHandler: (Doorbell) throws(SystemError) -> Handler
    ) throws(SystemError) {
        let epoll = try Epoll()
        var wake: EventFD?
        do {
            let made = try EventFD()
            wake = made
            try epoll.add(made.descriptor, events: .input)
            try epoll.add(listenFD, events: .input)
            let doorbell = Doorbell(made)
            self.handler = try makeHandler(doorbell)
            self.doorbell = doorbell
            self.wake = made
        } catch {
            wake?.close()
            epoll.close()
            throw error
        }
        self.epoll = epoll
        self.logger = logger
        self.logPrefix = logPrefix
        self.heartbeat = heartbeat
        self.gate = AcceptGate(listenFD: listenFD, epoll: epoll, logger: logger, logPrefix: logPrefix)
        handler.engine = self
    }

    deinit {
        doorbell.silence()
        wake.close()
        epoll.close()
    }

    var isDraining: Bool {
        if case .draining = phase { return true }
        return false
    }

    // MARK: The loop

    /// Runs until the drain has closed every connection (or its deadline passed); closes the listening socket
    /// and every connection.
    func run() {
        var nextBeat = heartbeat.map { EngineClock.now() + EngineClock.nanoseconds($0.interval) }
        heartbeat?.action()
        while true {
            if case .draining(let deadline) = phase, connections.isEmpty || EngineClock.now() >= deadline { break }
            var earliest = handler.nextDeadline() ?? .max
            if let beat = nextBeat { earliest = min(earliest, beat) }
            if case .draining(let deadline) = phase { earliest = min(earliest, deadline) }
            if let paused = gate.pausedUntil { earliest = min(earliest, paused) }
            let count: Int
            do {
                count = try epoll.wait(
                    into: events, timeout: earliest == .max ? -1 : EngineClock.milliseconds(until: earliest))
            } catch {
                logger.error(logPrefix + "epoll_wait failed; the server stops", ["ERRNO": String(error.errno)])
                break
            }
            // Hangups before new connections: a slot its peer gave up is free for the client behind it.
            var listenReady = false
            for index in 0..<count {
                let event = events[index]
                let fd = event.descriptor
                if fd == wake.descriptor {
                    wake.drain()
                    handler.woke()
                } else if fd == gate.listenFD {
                    listenReady = true
                } else if let connection = connections[fd] {
                    handler.handle(event.events, on: connection)
                }
            }
            if listenReady { acceptConnections() }
            if let paused = gate.pausedUntil, EngineClock.now() >= paused { gate.resume() }
            if let beat = nextBeat, let heartbeat, EngineClock.now() >= beat {
                heartbeat.action()
                nextBeat = EngineClock.now() + EngineClock.nanoseconds(heartbeat.interval)
            }
            handler.tick()
        }
        for connection in Array(connections.values) { close(connection) }
        gate.stop()
        handler.stopped()
    }

    /// Stops accepting and gives the connections until `timeout` nanoseconds from now to finish.
    func beginDraining(timeout: UInt64) {
        guard case .running = phase else { return }
        phase = .draining(deadline: EngineClock.now() + timeout)
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
            guard let connection = handler.open(fd) else { return false }
            if let uid = connection.peerUID, !share.admits(uid, capacity: handler.maxConnections) {
                if let count = refusedShares.record(now: EngineClock.now()) {
                    logger.warning(
                        logPrefix + "refused connections of a user past its share of the connections",
                        [
                            "PEER_UID": String(uid), "CONNECTIONS_REFUSED": String(count),
                            "USER_SHARE": String(ConnectionShare.perUser(of: handler.maxConnections)),
                        ])
                }
                handler.refuse(fd, logCount: nil)
                return false
            }
            share.opened(connection.peerUID)
            connections[fd] = connection
            handler.settle(connection)
            return true
        }
    }

    /// At the limit, handles the connections whose peers left since the last wait, without waiting: a peer that
    /// closed its end right before another connected must not keep its slot from that one.
    func reapHangups() {
        let count = (try? epoll.wait(into: hangups, timeout: 0)) ?? 0
        for index in 0..<count {
            let event = hangups[index]
            guard !event.events.isDisjoint(with: [.readHangup, .hangup, .error]),
                let connection = connections[event.descriptor]
            else { continue }
            handler.handle(event.events, on: connection)
        }
    }
}

/// Rings the engine's eventfd from any thread, until the engine has closed it.
final class Doorbell: Sendable {
    private let wake: Locked<EventFD?>

    init(_ wake: EventFD) { self.wake = Locked(wake) }

    func ring() { wake.withLock { $0?.ring() } }

    func silence() { wake.withLock { $0 = nil } }
}
