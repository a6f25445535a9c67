import FlagsCore
import FlagsProtocol
import UnixIO

/// The line protocol on the event loop: its mailbox (answers from the async side, the flags' changes), and what a
/// line connection adds to the framed steps every protocol shares (`FramedHandler`).
///
/// Everything a request touches on the hot path (connections, subscriptions, the snapshot) is owned by the
/// event loop's thread, so `get` takes no lock. Other threads talk to it only through `post(_:)`: a locked
/// mailbox and the loop's doorbell. The jobs around it have their own types, owned by that thread too:
/// `LineConnection` (input framing and output), `RequestRouter` (what a line asks), `SubscriptionTable` (`listen`
/// and fan-out).
///
/// `@unchecked Sendable`: other threads call only `post(_:)`, which touches the `Sendable` mailbox.
final class LineHandler: ServedHandler, @unchecked Sendable {
    typealias Connection = LineConnection

    /// Messages to the loop from other threads.
    enum Mail: ServerMail {
        /// Gathers the metric families on the loop, where its counters live, and hands them to `reply`.
        case metrics(reply: @Sendable ([MetricFamily]) -> Void)
        case completion(RequestRouter.Work, result: Result<any CallResult, RPCError>)
        case limits(ServerLimits)
        case shutdown
    }

    // Shared with other threads.
    private let mailbox: Mailbox<Mail>

    // Loop thread only.
    unowned(unsafe) var engine: EventEngine<LineHandler>!
    let router: RequestRouter
    let metrics: ServerMetrics
    let propagation: PropagationTracker
    let subscriptions: SubscriptionTable
    var limits: ServerLimits
    let logger: Logger
    var snapshot: FlagSnapshot
    var nextIdleSweep: UInt64

    static let logPrefix = ""
    static let surface = "line"
    var listenCount: Int { subscriptions.count }
    static let serverName = "SocketServer"
    static let terminator = UInt8(ascii: "\n")

    init(
        doorbell: Doorbell,
        store: FlagStore,
        controller: FlagService,
        limits: ServerLimits,
        logger: Logger,
        submit: @escaping @Sendable (RequestRouter.Work) -> Void
    ) {
        self.mailbox = Mailbox(doorbell: doorbell, store: store)
        self.limits = limits
        self.nextIdleSweep = EngineClock.now() + limits.idleTimeout
        self.logger = logger
        let metrics = ServerMetrics()
        self.metrics = metrics
        self.propagation = PropagationTracker(metrics: metrics)
        self.subscriptions = SubscriptionTable(metrics: metrics)
        self.router = RequestRouter(
            controller: controller, subscriptions: subscriptions, metrics: metrics, submit: submit)
        self.snapshot = mailbox.changes.initial
    }

    /// Hands a message to the loop from any thread.
    func post(_ message: Mail) {
        mailbox.post(message)
    }

    func woke() {
        // Changes first: one made before an answer was posted (the answer to the call that made it) reaches the
        // subscribers before that answer, as it did when both came through one inbox.
        for change in mailbox.changes.take() { apply(change.update, madeAt: change.madeAt) }
        for message in mailbox.take() {
            switch message {
            case .metrics(let reply):
                reply(
                    router.metricFamilies(
                        snapshot: snapshot, openConnections: engine.connections.count,
                        surfaces: engine.loop.surfaceGauges()))
            case .completion(let work, let result): complete(work.connection, requestID: work.requestID, result: result)
            case .limits(let newLimits): limits = newLimits
            case .shutdown: engine.beginDraining(timeout: Self.drainTimeout)
            }
        }
    }

    /// After the loop: a `metrics` question that arrived too late still gets its answer, so that no one waits
    /// for a loop that is gone. (Nothing else in the mailbox needs one.)
    func stopped() {
        for case .metrics(let reply) in mailbox.close() {
            reply(router.metricFamilies(snapshot: snapshot, openConnections: 0, surfaces: []))
        }
    }

    // MARK: What a line connection adds to the framed steps

    func makeConnection(id: UInt64, fd: Int32, peer: PeerCredentials) -> LineConnection {
        LineConnection(id: id, fd: fd, peer: peer, maxLineBytes: limits.maxLineBytes)
    }

    /// A line connection reads its next request while it has subscriptions.
    func streams(_ connection: LineConnection) -> Bool { false }

    func listens(_ connection: LineConnection) -> Bool { !connection.subscriptions.isEmpty }

    /// Never called: a line connection never streams.
    func endStream(_ connection: LineConnection) {}

    func route(_ message: ArraySlice<UInt8>, on connection: LineConnection) {
        router.route(
            message, on: connection, snapshot: snapshot, limits: limits, openConnections: engine.connections.count,
            surfaces: { engine.loop.surfaceGauges() })
    }

    func refuseTooLong(_ connection: LineConnection) {
        metrics.error(.lineTooLong(limit: limits.maxLineBytes))
        Message.writeError(
            id: .unreadable, error: .lineTooLong(limit: limits.maxLineBytes), to: &connection.output.bytes)
        logger.warning(
            "closed a connection that sent a line over MaxLineBytes", ["PEER_PID": String(connection.peer.pid)])
    }

    /// A change is propagated once every connection it was queued on has written it.
    func sentEverything(_ connection: LineConnection) {
        if !propagation.isIdle { propagation.written(connection.id, now: EngineClock.now()) }
    }

    func forget(_ connection: LineConnection) {
        subscriptions.remove(connection)
        if !propagation.isIdle { propagation.written(connection.id, now: EngineClock.now()) }
    }

    // MARK: Answers from the async side, changes of the flag set

    func complete(_ key: ConnectionKey, requestID: RequestID?, result: Result<any CallResult, RPCError>) {
        guard let connection = engine.connection(key) else { return }
        connection.busy = false
        connection.activeSinceSweep = true
        if let requestID {
            switch result {
            case .success(let value): Message.writeResult(id: requestID, result: value, to: &connection.output.bytes)
            case .failure(let error):
                metrics.error(error)
                Message.writeError(id: requestID, error: error, to: &connection.output.bytes)
            }
        }
        processMessages(connection)
        settle(connection)
    }

    /// Takes a newer snapshot and tells the subscriptions what changed (R9); a change that reached a subscriber
    /// goes to the propagation histogram once every connection it was queued on has written it.
    private func apply(_ update: FlagUpdate, madeAt: UInt64) {
        guard update.snapshot.revision > snapshot.revision else { return }
        snapshot = update.snapshot
        let notified = subscriptions.fanOut(update, to: Array(engine.connections.values)) { settle($0) }
        guard !notified.isEmpty else { return }
        // A connection that closed during the fan-out is no longer in the table and holds nothing to wait for.
        let unsent = notified.filter { engine.isOpen($0) && $0.pendingBytes > 0 }.map(\.id)
        propagation.queued(madeAt: madeAt, unsent: Set(unsent), now: EngineClock.now())
    }
}
