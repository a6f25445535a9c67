public import FlagsProtocol

/// Why a call to the daemon failed.
public enum ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The socket could not be reached; nothing was sent.
    case unreachable(socketPath: String, reason: String)
    /// The daemon answered with an error.
    case rpc(RPCError)
    /// The connection closed before the answer came.
    case disconnected(socketPath: String)
    /// The daemon sent something this client cannot read.
    case protocolViolation(String)

    public var description: String {
        switch self {
        case .unreachable(let path, let reason): "cannot reach pwflagsd at \(path): \(reason)"
        case .rpc(let error): error.message
        case .disconnected(let path): "pwflagsd at \(path) closed the connection"
        case .protocolViolation(let detail): "unexpected answer from pwflagsd: \(detail)"
        }
    }
}
