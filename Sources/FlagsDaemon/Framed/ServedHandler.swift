import FlagsProtocol

/// A call a framed protocol hands off the loop because it may wait; its answer goes back to the loop.
protocol OffLoopCall: Sendable {
    /// The connection that made the call, which its answer goes to.
    var connection: ConnectionKey { get }
    var perform: @Sendable () async -> Result<any CallResult, RPCError> { get }
}

/// The messages a framed protocol's handler takes from other threads: its server's, and its own.
enum FramedMail<Call: OffLoopCall, Own: Sendable>: Sendable {
    /// A call carried out off the loop, with its answer.
    case completion(Call, result: Result<any CallResult, RPCError>)
    /// New `[Daemon]` limits (a reload).
    case limits(ServerLimits)
    /// Stop accepting, answer what was received, flush, end.
    case shutdown
    /// A message only this protocol takes (the line socket's `metrics`).
    case own(Own)
}

/// What a framed protocol's server needs of its handler beyond the framed steps: how it is made, what a change of
/// the flags and an answer from off the loop mean to it. Taking the mail, the changes first, is written once here.
protocol ServedHandler: FramedHandler, Sendable {
    /// The calls it hands off the loop.
    associatedtype Call: OffLoopCall
    /// The messages of its own, besides its server's (`Never` for none).
    associatedtype OwnMail: Sendable
    typealias Mail = FramedMail<Call, OwnMail>

    init(
        doorbell: Doorbell, store: FlagStore, controller: FlagService, limits: ServerLimits, logger: Logger,
        submit: @escaping @Sendable (Call) -> Void)

    /// The mail and the flags' changes waiting for the loop: the one member other threads touch.
    var mailbox: Mailbox<Mail> { get }

    /// Tells the protocol's listens what `change` changed; `framed.snapshot` is already its snapshot.
    func fanOut(_ change: ChangeFeed.Change)
    /// Writes the answer to `call` on its connection, which takes its next messages after it.
    func answer(_ call: Call, result: Result<any CallResult, RPCError>, on connection: Connection)
    /// Takes a message of the protocol's own.
    func receive(_ mail: OwnMail)

    /// What the log calls the server when it ends unexpectedly.
    static var serverName: String { get }
}

extension ServedHandler {
    /// Hands a message to the loop from any thread.
    func post(_ message: Mail) {
        mailbox.post(message)
    }

    func woke() {
        // Changes first: one made before an answer was posted (the answer to the call that made it) reaches the
        // listeners before that answer, as it did when both came through one inbox.
        for change in mailbox.changes.take() where change.update.snapshot.revision > framed.snapshot.revision {
            framed.snapshot = change.update.snapshot
            fanOut(change)
        }
        for message in mailbox.take() {
            switch message {
            case .completion(let call, let result): complete(call, result: result)
            case .limits(let limits): framed.limits = limits
            case .shutdown: engine.beginDraining(timeout: Self.drainTimeout)
            case .own(let mail): receive(mail)
            }
        }
    }

    /// After the loop: later changes are dropped, and so is the mail no one waits for an answer to.
    func stopped() {
        _ = mailbox.close()
    }

    /// A call carried out off the loop came back: its answer is written, then the connection's next messages read.
    private func complete(_ call: Call, result: Result<any CallResult, RPCError>) {
        guard let connection = engine.connection(call.connection) else { return }
        connection.busy = false
        connection.activeSinceSweep = true
        answer(call, result: result, on: connection)
        processMessages(connection)
        settle(connection)
    }
}

extension ServedHandler where OwnMail == Never {
    func receive(_ mail: Never) {}
}
