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
    typealias Call = VarlinkRouter.Work
    /// Varlink takes only its server's mail.
    typealias OwnMail = Never

    // Shared with other threads.
    let mailbox: Mailbox<Mail>

    // Loop thread only.
    unowned(unsafe) var engine: EventEngine<VarlinkHandler>!
    /// Unchecked at run time, as `EventLoop` says of the request path's state.
    @exclusivity(unchecked) var framed: FramedState
    let router: VarlinkRouter
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
        let mailbox = Mailbox<Mail>(doorbell: doorbell, store: store)
        self.mailbox = mailbox
        self.framed = FramedState(limits: limits, logger: logger, snapshot: mailbox.changes.initial)
        self.router = VarlinkRouter(controller: controller, logger: logger, submit: submit)
    }

    // MARK: What a Varlink connection adds to the framed steps

    func makeConnection(id: UInt64, fd: Int32, peer: PeerCredentials) -> VarlinkConnection {
        VarlinkConnection(id: id, fd: fd, peer: peer, maxMessageBytes: framed.limits.maxLineBytes)
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
            message, on: connection, snapshot: framed.snapshot, limits: framed.limits,
            openConnections: engine.connections.count)
    }

    func refuseTooLong(_ connection: VarlinkConnection) {
        VarlinkReply.write(.messageTooLong(limit: framed.limits.maxLineBytes), to: &connection.output.bytes)
        if let count = refusedMessages.record(now: EngineClock.now()) {
            framed.logger.warning(
                "Varlink: closed connections that sent a message over MaxLineBytes",
                ["PEER_PID": String(connection.peer.pid), "CONNECTIONS": String(count)])
        }
    }

    func forget(_ connection: VarlinkConnection) {
        if let listen = connection.listen { router.ended(listen) }
    }

    // MARK: Answers from the async side, changes of the flag set

    /// Writes the reply or the error of a call, unless it was `oneway`.
    func answer(_ work: VarlinkRouter.Work, result: Result<any CallResult, RPCError>, on connection: VarlinkConnection)
    {
        guard !work.oneway else { return }
        switch result {
        case .success(let value): VarlinkReply.write(value, to: &connection.output.bytes)
        case .failure(let error):
            VarlinkReply.write(VarlinkError(error, method: work.method), to: &connection.output.bytes)
        }
    }

    /// Streams what changed to each `Listen` whose keys it touches (R9: an update that changes none of them sends
    /// nothing). A change is encoded once for all the listeners of the same keys.
    func fanOut(_ change: ChangeFeed.Change) {
        guard router.listeners.count > 0 else { return }
        let update = change.update
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
