import FlagsCore
import FlagsProtocol
import UnixIO

/// Varlink on an event engine of its own: the inbox, replies coming back from the async side, the flags'
/// changes (`ChangeFeed`) streamed to the `Listen` calls; one connection's steps are in
/// VarlinkHandler+Connections.
///
/// Bounded as the line socket is, by the same `[Daemon]` keys (`ServerLimits`): connections and each user's
/// share of them (the engine's `ConnectionShare`), a message's bytes (`MaxLineBytes`), pending output
/// (`MaxPendingBytes`, the overrun rule), listen keys, the idle timeout. A connection has at most one call in
/// flight, and a call's async work ends with it (`VarlinkServer`).
///
/// `@unchecked Sendable`: other threads call only `post(_:)`, which touches the `Locked` inbox and the doorbell.
final class VarlinkHandler: ConnectionHandler, @unchecked Sendable {
    /// Messages to the loop from other threads.
    enum Mail: Sendable {
        case completion(VarlinkRouter.Work, result: Result<any CallResult, RPCError>)
        case limits(ServerLimits)
        case shutdown
    }

    private let inbox = Locked<[Mail]>([])
    private let doorbell: Doorbell
    private let feed: ChangeFeed

    // Loop thread only.
    unowned(unsafe) var engine: EventEngine<VarlinkHandler>!
    let router: VarlinkRouter
    var limits: ServerLimits
    let logger: Logger
    var snapshot: FlagSnapshot
    var nextConnectionID: UInt64 = 1
    var nextIdleSweep: UInt64
    var refusedMessages = LogThrottle()

    /// The drain allowed at shutdown for calls in flight and unsent output.
    static let drainTimeout: UInt64 = 2_000_000_000

    init(
        doorbell: Doorbell, store: FlagStore, controller: FlagService, limits: ServerLimits, logger: Logger,
        submit: @escaping @Sendable (VarlinkRouter.Work) -> Void
    ) {
        self.doorbell = doorbell
        self.limits = limits
        self.logger = logger
        self.nextIdleSweep = EngineClock.now() + limits.idleTimeout
        self.router = VarlinkRouter(controller: controller, logger: logger, submit: submit)
        self.feed = ChangeFeed(store: store, doorbell: doorbell)
        self.snapshot = feed.initial
    }

    /// Hands a message to the loop from any thread.
    func post(_ message: Mail) {
        inbox.withLock { $0.append(message) }
        doorbell.ring()
    }

    var maxConnections: Int { limits.maxConnections }

    func woke() {
        // Changes first, as on the line socket: a change a call made reaches the listeners before its reply.
        for change in feed.take() { apply(change.update) }
        let messages = inbox.withLock { inbox in
            defer { inbox.removeAll(keepingCapacity: true) }
            return inbox
        }
        for message in messages {
            switch message {
            case .completion(let work, let result): complete(work, result: result)
            case .limits(let newLimits): limits = newLimits
            case .shutdown: engine.beginDraining(timeout: Self.drainTimeout)
            }
        }
    }

    func stopped() {
        feed.close()
        inbox.withLock { $0.removeAll() }
    }

    func drainStarted() {
        for connection in Array(engine.connections.values) {
            processMessages(connection)
            settle(connection)
        }
    }

    func nextDeadline() -> UInt64? { nextIdleSweep }

    func tick() {
        sweepIdleIfDue()
    }

    /// Writes the reply of a call the async side carried out, then reads the connection's next calls.
    func complete(_ work: VarlinkRouter.Work, result: Result<any CallResult, RPCError>) {
        guard let connection = engine.connection(work.connection) else { return }
        connection.busy = false
        connection.activeSinceSweep = true
        if !work.oneway {
            switch result {
            case .success(let value): VarlinkReply.write(value, to: &connection.output.bytes)
            case .failure(let error):
                VarlinkReply.write(VarlinkError(error, method: work.method), to: &connection.output.bytes)
            }
        }
        processMessages(connection)
        settle(connection)
    }

    /// Takes a newer snapshot and streams what changed to each `Listen` whose keys it touches (R9: an update
    /// that changes none of them sends nothing). A change is encoded once for all the listeners of the same keys.
    private func apply(_ update: FlagUpdate) {
        guard update.snapshot.revision > snapshot.revision else { return }
        snapshot = update.snapshot
        guard router.listeners.count > 0 else { return }
        let encoded = update.snapshot.encoded
        let expiresAt = update.expiry.json
        var tails = ChangeTails(update) { diff in
            var bytes: [UInt8] = []
            VarlinkReply.writeChange(
                epoch: update.snapshot.epoch, revision: update.snapshot.revision, expiresAt: expiresAt,
                changed: diff.changed.map { encoded[FlagKey($0.key)] ?? $0.wireBytes }, removed: diff.removed,
                to: &bytes)
            return bytes
        }
        _ = router.listeners.fanOut(&tails, to: Array(engine.connections.values), settle: settle)
    }
}
