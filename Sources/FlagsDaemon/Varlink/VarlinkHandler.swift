import FlagsCore
import FlagsProtocol
import UnixIO

/// Varlink on the event loop: its mailbox (replies coming back from the async side, the flags' changes, which
/// are streamed to the `Listen` calls), and what a Varlink connection adds to the framed steps every protocol
/// shares (`FramedHandler`).
///
/// Bounded as the line socket is, by the same `[Daemon]` keys (`ServerLimits`): connections and each user's
/// share of them (the engine's `ConnectionShare`), a message's bytes (`MaxLineBytes`), pending output
/// (`MaxPendingBytes`, the overrun rule), listen keys, the idle timeout. A connection has at most one call in
/// flight, and a call's async work ends with it (`VarlinkServer`).
///
/// `@unchecked Sendable`: other threads call only `post(_:)`, which touches the `Sendable` mailbox.
final class VarlinkHandler: ServedHandler, @unchecked Sendable {
    typealias Connection = VarlinkConnection

    /// Messages to the loop from other threads.
    enum Mail: ServerMail {
        case completion(VarlinkRouter.Work, result: Result<any CallResult, RPCError>)
        case limits(ServerLimits)
        case shutdown
    }

    private let mailbox: Mailbox<Mail>

    // Loop thread only.
    unowned(unsafe) var engine: EventEngine<VarlinkHandler>!
    let router: VarlinkRouter
    var limits: ServerLimits
    let logger: Logger
    var snapshot: FlagSnapshot
    var nextIdleSweep: UInt64
    var refusedMessages = LogThrottle()

    static let logPrefix = "Varlink: "
    static let surface = "varlink"
    var listenCount: Int { router.listeners.count }
    static let serverName = "VarlinkServer"
    static let terminator = VarlinkReply.terminator

    init(
        doorbell: Doorbell, store: FlagStore, controller: FlagService, limits: ServerLimits, logger: Logger,
        submit: @escaping @Sendable (VarlinkRouter.Work) -> Void
    ) {
        self.mailbox = Mailbox(doorbell: doorbell, store: store)
        self.limits = limits
        self.logger = logger
        self.nextIdleSweep = EngineClock.now() + limits.idleTimeout
        self.router = VarlinkRouter(controller: controller, logger: logger, submit: submit)
        self.snapshot = mailbox.changes.initial
    }

    /// Hands a message to the loop from any thread.
    func post(_ message: Mail) {
        mailbox.post(message)
    }

    func woke() {
        // Changes first, as on the line socket: a change a call made reaches the listeners before its reply.
        for change in mailbox.changes.take() { apply(change.update) }
        for message in mailbox.take() {
            switch message {
            case .completion(let work, let result): complete(work, result: result)
            case .limits(let newLimits): limits = newLimits
            case .shutdown: engine.beginDraining(timeout: Self.drainTimeout)
            }
        }
    }

    func stopped() {
        _ = mailbox.close()
    }

    // MARK: What a Varlink connection adds to the framed steps

    func makeConnection(id: UInt64, fd: Int32, peer: PeerCredentials) -> VarlinkConnection {
        VarlinkConnection(id: id, fd: fd, peer: peer, maxMessageBytes: limits.maxLineBytes)
    }

    /// A `Listen` never ends, so no later call is read (as sd-varlink does, replies to one call are never
    /// interleaved with another's).
    func streams(_ connection: VarlinkConnection) -> Bool { connection.listen != nil }

    func listens(_ connection: VarlinkConnection) -> Bool { connection.listen != nil }

    func endStream(_ connection: VarlinkConnection) {
        guard let listen = connection.listen else { return }
        connection.listen = nil
        router.ended(listen)
        ListenBounds.close(listen.keys, on: connection)
        VarlinkReply.write(.listenInterrupted, to: &connection.output.bytes)
    }

    func route(_ message: ArraySlice<UInt8>, on connection: VarlinkConnection) {
        router.route(
            message, on: connection, snapshot: snapshot, limits: limits, openConnections: engine.connections.count)
    }

    func refuseTooLong(_ connection: VarlinkConnection) {
        VarlinkReply.write(.messageTooLong(limit: limits.maxLineBytes), to: &connection.output.bytes)
        if let count = refusedMessages.record(now: EngineClock.now()) {
            logger.warning(
                "Varlink: closed connections that sent a message over MaxLineBytes",
                ["PEER_PID": String(connection.peer.pid), "CONNECTIONS": String(count)])
        }
    }

    /// Nothing waits for a Varlink connection's output to be written.
    func sentEverything(_ connection: VarlinkConnection) {}

    func forget(_ connection: VarlinkConnection) {
        if let listen = connection.listen { router.ended(listen) }
    }

    // MARK: Answers from the async side, changes of the flag set

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
