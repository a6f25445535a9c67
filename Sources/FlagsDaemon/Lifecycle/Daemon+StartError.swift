public import UnixIO

extension Daemon {
    /// Why the daemon could not start: the one error of its start, which `main` logs before it exits 1.
    ///
    /// `code` says what kind of failure it is, `message` says it in one line for the operator, and `cause` is the
    /// system call that failed, when one did.
    public enum StartError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The signal pipe could not be made, so SIGTERM could not stop the daemon gracefully.
        case signalsUnavailable(cause: SystemError)
        /// Another live daemon accepts on the socket path.
        case socketInUse(path: String)
        /// Something that is not a socket is at the socket path; it is never removed.
        case notASocket(path: String)
        /// Listening on the socket path failed.
        case cannotListen(path: String, cause: SystemError)
        /// The socket systemd passed could not be used.
        case activatedSocketUnusable(cause: SystemError)
        /// The socket server could not be set up (its epoll set or wake-up descriptor).
        case serverUnavailable(cause: SystemError)
        /// The state directory belongs to another user or others may write in it: what it holds could be planted.
        case stateDirectoryUntrusted(reason: String)

        /// The kind of failure, for programs and tests to branch on; more may come.
        public struct Code: Hashable, Sendable, CustomStringConvertible {
            public let description: String

            /// SIGTERM, SIGINT and SIGHUP could not be caught.
            public static let signalsUnavailable = Code(description: "signalsUnavailable")
            /// The socket path is served by another daemon, or holds something that is not a socket.
            public static let socketTaken = Code(description: "socketTaken")
            /// The socket could not be opened or used.
            public static let socketUnavailable = Code(description: "socketUnavailable")
            /// The socket server could not be set up.
            public static let serverUnavailable = Code(description: "serverUnavailable")
            /// The state directory could have been planted by another user.
            public static let stateDirectoryUntrusted = Code(description: "stateDirectoryUntrusted")
        }

        public var code: Code {
            switch self {
            case .signalsUnavailable: .signalsUnavailable
            case .socketInUse, .notASocket: .socketTaken
            case .cannotListen, .activatedSocketUnusable: .socketUnavailable
            case .serverUnavailable: .serverUnavailable
            case .stateDirectoryUntrusted: .stateDirectoryUntrusted
            }
        }

        /// What went wrong, in one line.
        public var message: String {
            switch self {
            case .signalsUnavailable(let cause):
                "cannot catch SIGTERM, SIGINT and SIGHUP, so the daemon could not stop gracefully: \(cause)"
            case .socketInUse(let path): "another pwflagsd is already serving \(path); not taking its socket"
            case .notASocket(let path): "\(path) exists and is not a socket; remove it or choose another SocketPath"
            case .cannotListen(let path, let cause): "cannot listen on \(path): \(cause.reason)"
            case .activatedSocketUnusable(let cause): "cannot use the socket systemd passed: \(cause)"
            case .serverUnavailable(let cause): "cannot start the socket server: \(cause)"
            case .stateDirectoryUntrusted(let reason):
                "refusing the state directory: \(reason); another user could have planted what it holds"
                    + " (make it belong to root or the daemon's user, mode 0700, or choose another StateDirectory)"
            }
        }

        /// The system call that failed, when one did.
        public var cause: SystemError? {
            switch self {
            case .signalsUnavailable(let cause), .cannotListen(_, let cause), .activatedSocketUnusable(let cause),
                .serverUnavailable(let cause):
                cause
            case .socketInUse, .notASocket, .stateDirectoryUntrusted: nil
            }
        }

        public var description: String { message }
    }
}
