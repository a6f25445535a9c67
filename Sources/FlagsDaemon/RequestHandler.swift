public import FlagsCore
public import FlagsProtocol
public import UnixIO

/// What the socket server asks of the rest of the daemon.
///
/// Reads of the flag set (`get`, `getAll`, `isEnabled`, `listen`) never come here: the server answers them
/// from the store's snapshot on its own loop. Everything that may wait (the network, the disk) does.
public protocol RequestHandler: Sendable {
    /// The `status` the daemon knows; the server fills in its own members (connections, subscriptions, flags).
    func status() -> StatusResult

    /// `status.expiresAt`, which `listen` replies and `flagsChanged` notifications carry too.
    func expiresAt() -> JSONValue

    /// Carries out a method that may wait. The server keeps each connection's responses in request order.
    func perform(_ call: Call, peer: PeerCredentials) async -> Result<any CallResult, RPCError>
}
