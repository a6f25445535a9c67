public import FlagsCore
public import FlagsProtocol

/// Why a call to the daemon failed: the one error of the client boundary, which the CLI prints as it is.
///
/// `code` says what kind of failure it is, `message` says it in one line, `cause` is the daemon's own error
/// when it answered with one, and `description` is the whole text for people.
public enum ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The socket could not be reached; nothing was sent.
    case unreachable(socketPath: String, reason: String)
    /// The daemon answered with an error.
    case rpc(RPCError)
    /// The connection closed before the answer came.
    case disconnected(socketPath: String)
    /// The daemon sent something this client cannot read.
    case protocolViolation(String)

    /// The kind of failure, for programs to branch on; more may come.
    public typealias Code = ErrorCode<ClientError>

    /// The kind of this failure: `rpc` is `rejected`, each other case its own code.
    public var code: Code {
        switch self {
        case .unreachable: .unreachable
        case .disconnected: .disconnected
        case .rpc: .rejected
        case .protocolViolation: .protocolViolation
        }
    }

    /// What went wrong, in one line.
    public var message: String {
        switch self {
        case .unreachable(let path, let reason): "cannot reach pwflagsd at \(path): \(reason)"
        case .rpc(let error): error.message
        case .disconnected(let path): "pwflagsd at \(path) closed the connection"
        case .protocolViolation(let detail): "unexpected answer from pwflagsd: \(detail)"
        }
    }

    /// The daemon's error when it answered with one.
    public var cause: RPCError? {
        guard case .rpc(let error) = self else { return nil }
        return error
    }

    /// `message`, with what the daemon's error adds: the R11 status of a failed refresh, one line per problem
    /// of a broken configuration.
    public var description: String {
        guard let cause else { return message }
        if let problems = cause.problems {
            return ([message] + problems.map { "  \($0)" }).joined(separator: "\n")
        }
        if let status = cause.refreshStatus {
            return "\(message) (\(RPCError.errorDomain) status \(status))"
        }
        return message
    }
}

extension ErrorCode where Domain == ClientError {
    /// The daemon could not be reached; nothing was sent.
    public static var unreachable: Self { Self("unreachable") }
    /// The connection closed before the answer came.
    public static var disconnected: Self { Self("disconnected") }
    /// The daemon refused or failed the call; `cause` is its error.
    public static var rejected: Self { Self("rejected") }
    /// The daemon's answer could not be read.
    public static var protocolViolation: Self { Self("protocolViolation") }
}
