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
    typealias Call = RequestRouter.Work

    /// The line socket's own message to the loop, besides its server's.
    enum OwnMail: Sendable {
        /// Gathers the metric families on the loop, where its counters live, and hands them to `reply`.
        case metrics(reply: @Sendable ([MetricFamily]) -> Void)
    }

    // Shared with other threads.
    let mailbox: Mailbox<Mail>

    // Loop thread only.
    unowned(unsafe) var engine: EventEngine<LineHandler>!
    /// Unchecked at run time, as `EventLoop` says of the request path's state.
    @exclusivity(unchecked) var framed: FramedState
    let router: RequestRouter
    let metrics: ServerMetrics
    let propagation: PropagationTracker
    let subscriptions: SubscriptionTable

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
        let mailbox = Mailbox<Mail>(doorbell: doorbell, store: store)
        self.mailbox = mailbox
        self.framed = FramedState(limits: limits, logger: logger, snapshot: mailbox.changes.initial)
        let metrics = ServerMetrics()
        self.metrics = metrics
        self.propagation = PropagationTracker(metrics: metrics)
        self.subscriptions = SubscriptionTable(metrics: metrics)
        self.router = RequestRouter(
            controller: controller, subscriptions: subscriptions, metrics: metrics, submit: submit)
    }

    func receive(_ mail: OwnMail) {
        switch mail {
        case .metrics(let reply):
            reply(
                router.metricFamilies(
                    snapshot: framed.snapshot, openConnections: engine.connections.count,
                    surfaces: engine.loop.surfaceGauges()))
        }
    }

    /// After the loop: a `metrics` question that arrived too late still gets its answer, so that no one waits
    /// for a loop that is gone. (Nothing else in the mailbox needs one.)
    func stopped() {
        for case .own(.metrics(let reply)) in mailbox.close() {
            reply(router.metricFamilies(snapshot: framed.snapshot, openConnections: 0, surfaces: []))
        }
    }

    // MARK: What a line connection adds to the framed steps

    func makeConnection(id: UInt64, fd: Int32, peer: PeerCredentials) -> LineConnection {
        LineConnection(id: id, fd: fd, peer: peer, maxLineBytes: framed.limits.maxLineBytes)
    }

    /// A line connection never streams: it reads its next request while it has subscriptions.
    func listens(_ connection: LineConnection) -> Bool { !connection.subscriptions.isEmpty }

    func route(_ message: ArraySlice<UInt8>, on connection: LineConnection) {
        router.route(
            message, on: connection, snapshot: framed.snapshot, limits: framed.limits,
            openConnections: engine.connections.count, surfaces: { engine.loop.surfaceGauges() })
    }

    func refuseTooLong(_ connection: LineConnection) {
        let limit = framed.limits.maxLineBytes
        metrics.error(.lineTooLong(limit: limit))
        Message.writeError(id: .unreadable, error: .lineTooLong(limit: limit), to: &connection.output.bytes)
        framed.logger.warning(
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

    /// Writes the result or the error of a request that came with an id; a notification (no id) gets nothing.
    func answer(_ work: RequestRouter.Work, result: Result<any CallResult, RPCError>, on connection: LineConnection) {
        guard let requestID = work.requestID else { return }
        switch result {
        case .success(let value): Message.writeResult(id: requestID, result: value, to: &connection.output.bytes)
        case .failure(let error):
            metrics.error(error)
            Message.writeError(id: requestID, error: error, to: &connection.output.bytes)
        }
    }

    /// Tells the subscriptions what changed (R9); a change that reached a subscriber goes to the propagation
    /// histogram once every connection it was queued on has written it.
    func fanOut(_ change: ChangeFeed.Change) {
        let notified = subscriptions.fanOut(change.update, to: Array(engine.connections.values)) { settle($0) }
        guard !notified.isEmpty else { return }
        // A connection that closed during the fan-out is no longer in the table and holds nothing to wait for.
        let unsent = notified.filter { engine.isOpen($0) && $0.pendingBytes > 0 }.map(\.id)
        propagation.queued(madeAt: change.madeAt, unsent: Set(unsent), now: EngineClock.now())
    }
}
