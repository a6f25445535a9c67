import FlagsCore
import FlagsProtocol
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The socket server's event loop: one thread, epoll, non-blocking sockets; the inbox, the watchdog heartbeat
/// and the drain at shutdown.
///
/// Everything a request touches on the hot path (connections, subscriptions, the loop's snapshot) is owned by
/// this thread, so `get` takes no lock. Other threads talk to the loop only through `post(_:)`: a locked inbox
/// and an eventfd that wakes `epoll_wait`. The jobs around it have their own types, owned by this thread too:
/// `AcceptGate` (who may connect), `Connection` (input framing and output), `RequestRouter` (what a line asks),
/// `SubscriptionTable` (`listen` and fan-out).
final class ServerLoop: @unchecked Sendable {
    /// Messages to the loop from other threads.
    enum Mail: Sendable {
        /// `at`: when the store made the change (`now()`), from which its propagation is measured.
        case update(FlagUpdate, at: UInt64)
        /// Renders the metrics text on the loop, where its counters live, and hands it to `reply`.
        case metrics(MetricsFormat, reply: @Sendable (String) -> Void)
        case completion(connection: UInt64, requestID: RequestID?, result: Result<any CallResult, RPCError>)
        case limits(ServerLimits)
        case access(AccessPolicy)
        case shutdown
    }

    /// A callback run on the loop thread every `interval` (the systemd watchdog), so that a hung loop stops it.
    struct Heartbeat: Sendable {
        let interval: Duration
        let action: @Sendable () -> Void
    }

    enum Phase {
        case running
        case draining(deadline: UInt64)
    }

    // Shared with other threads.
    private let inbox = Locked<[Mail]>([])
    private let wake: EventFD

    // Loop thread only (read by the steps in ServerLoop+Connections too).
    let epoll: Epoll
    let gate: AcceptGate
    let router: RequestRouter
    let metrics: ServerMetrics
    let propagation: PropagationTracker
    let subscriptions: SubscriptionTable
    var limits: ServerLimits
    let logger: Logger
    private let heartbeat: Heartbeat?
    var snapshot: FlagSnapshot
    var connections: [Int32: Connection] = [:]
    var nextConnectionID: UInt64 = 1
    var phase = Phase.running
    var readBuffer = [UInt8](repeating: 0, count: 65536)
    private let events = Epoll.Buffer(capacity: 256)
    /// A second buffer for `reapHangups`, which waits while the loop still reads `events`.
    let hangups = Epoll.Buffer(capacity: 64)

    /// The drain allowed at shutdown for in-flight requests and unsent output.
    static let drainTimeout: UInt64 = 2_000_000_000

    init(
        listenFD: Int32,
        store: FlagStore,
        controller: DaemonController,
        limits: ServerLimits,
        access: AccessPolicy,
        logger: Logger,
        heartbeat: Heartbeat?,
        submit: @escaping @Sendable (RequestRouter.Work) -> Void
    ) throws(SystemError) {
        self.limits = limits
        self.logger = logger
        let metrics = ServerMetrics()
        self.metrics = metrics
        self.propagation = PropagationTracker(metrics: metrics)
        self.subscriptions = SubscriptionTable(metrics: metrics)
        self.heartbeat = heartbeat
        let epoll = try Epoll()
        let wake: EventFD
        do {
            wake = try EventFD()
        } catch {
            epoll.close()
            throw error
        }
        self.epoll = epoll
        self.wake = wake
        self.gate = AcceptGate(listenFD: listenFD, epoll: epoll, logger: logger)
        self.router = RequestRouter(
            access: access, controller: controller, subscriptions: subscriptions, logger: logger, metrics: metrics,
            submit: submit)
        self.snapshot = FlagSnapshot.initial(epoch: store.epoch)
        try epoll.add(wake.descriptor, events: .input)
        try epoll.add(listenFD, events: .input)
        // Observe before reading the snapshot so that no update falls between the two.
        self.snapshot = store.observe { [weak self] update in self?.post(.update(update, at: Self.now())) }
    }

    deinit {
        wake.close()
        epoll.close()
    }

    /// Hands a message to the loop from any thread.
    func post(_ message: Mail) {
        inbox.withLock { $0.append(message) }
        wake.ring()
    }

    // MARK: The loop

    /// Runs until shutdown has drained every connection; closes the listening socket and every connection.
    func run() {
        var nextBeat = heartbeat.map { Self.now() + Self.nanoseconds($0.interval) }
        heartbeat?.action()
        while true {
            if case .draining(let deadline) = phase, connections.isEmpty || Self.now() >= deadline { break }
            var timeout: Int32 = -1
            if let beat = nextBeat { timeout = Self.milliseconds(until: beat) }
            if case .draining(let deadline) = phase {
                timeout = min(timeout < 0 ? Int32.max : timeout, Self.milliseconds(until: deadline))
            }
            if let paused = gate.pausedUntil {
                timeout = min(timeout < 0 ? Int32.max : timeout, Self.milliseconds(until: paused))
            }
            let count: Int
            do {
                count = try epoll.wait(into: events, timeout: timeout)
            } catch {
                logger.error("epoll_wait failed; the server stops", ["ERRNO": String(error.errno)])
                break
            }
            // Hangups before new connections: a slot its peer gave up is free for the client behind it.
            var listenReady = false
            for index in 0..<count {
                let event = events[index]
                let fd = event.descriptor
                if fd == wake.descriptor {
                    drainInbox()
                } else if fd == gate.listenFD {
                    listenReady = true
                } else if let connection = connections[fd] {
                    handle(event.events, on: connection)
                }
            }
            if listenReady { acceptConnections() }
            if let paused = gate.pausedUntil, Self.now() >= paused { gate.resume() }
            if let beat = nextBeat, let heartbeat, Self.now() >= beat {
                heartbeat.action()
                nextBeat = Self.now() + Self.nanoseconds(heartbeat.interval)
            }
        }
        for connection in connections.values { closeConnection(connection) }
        gate.stop()
        answerLeftoverMail()
    }

    /// After the loop: a `metrics` question that arrived too late still gets its answer, so that no one waits
    /// for a loop that is gone. (Nothing else in the inbox needs one.)
    private func answerLeftoverMail() {
        let messages = inbox.withLock { inbox in
            defer { inbox.removeAll() }
            return inbox
        }
        for case .metrics(let format, let reply) in messages {
            reply(router.metricsText(format: format, snapshot: snapshot, openConnections: 0))
        }
    }

    private func drainInbox() {
        wake.drain()
        let messages = inbox.withLock { inbox in
            defer { inbox.removeAll(keepingCapacity: true) }
            return inbox
        }
        for message in messages {
            switch message {
            case .update(let update, let madeAt): apply(update, madeAt: madeAt)
            case .metrics(let format, let reply):
                reply(router.metricsText(format: format, snapshot: snapshot, openConnections: connections.count))
            case .completion(let id, let requestID, let result):
                complete(connectionID: id, requestID: requestID, result: result)
            case .limits(let newLimits): limits = newLimits
            case .access(let newAccess): router.access = newAccess
            case .shutdown: beginDraining()
            }
        }
    }

    func beginDraining() {
        guard case .running = phase else { return }
        phase = .draining(deadline: Self.now() + Self.drainTimeout)
        gate.stop()
        // Lines already received are answered; nothing new is read.
        for connection in Array(connections.values) {
            processLines(connection)
            settle(connection)
        }
    }

    // MARK: Answers from the async side, changes of the flag set

    func complete(connectionID: UInt64, requestID: RequestID?, result: Result<any CallResult, RPCError>) {
        guard let connection = connections.values.first(where: { $0.id == connectionID }) else { return }
        connection.busy = false
        if let requestID {
            switch result {
            case .success(let value): Message.writeResult(id: requestID, result: value, to: &connection.output)
            case .failure(let error):
                metrics.error(error)
                Message.writeError(id: requestID, error: error, to: &connection.output)
            }
        }
        processLines(connection)
        settle(connection)
    }

    /// Takes a newer snapshot and tells the subscriptions what changed (R9); a change that reached a subscriber
    /// goes to the propagation histogram once every connection it was queued on has written it.
    private func apply(_ update: FlagUpdate, madeAt: UInt64) {
        guard update.snapshot.revision > snapshot.revision else { return }
        snapshot = update.snapshot
        let notified = subscriptions.fanOut(update, to: Array(connections.values), expiresAt: router.expiresAt) {
            settle($0)
        }
        guard !notified.isEmpty else { return }
        // A connection that closed during the fan-out is no longer in the table and holds nothing to wait for.
        let unsent = notified.filter { connections[$0.fd] === $0 && $0.pendingBytes > 0 }.map(\.id)
        propagation.queued(madeAt: madeAt, unsent: Set(unsent), now: Self.now())
    }

    // MARK: Time

    static func now() -> UInt64 { MonotonicClock.nanoseconds() }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    private static func milliseconds(until deadline: UInt64) -> Int32 {
        let now = now()
        guard deadline > now else { return 0 }
        return Int32(min(UInt64(Int32.max), (deadline - now + 999_999) / 1_000_000))
    }
}
