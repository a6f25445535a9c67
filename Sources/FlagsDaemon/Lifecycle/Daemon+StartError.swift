import FlagsCore
import UnixIO

extension Daemon {
    /// Why the daemon could not start: the one error of its start, which `main` logs before it exits 1.
    ///
    /// `code` says what kind of failure it is, `message` says it in one line for the operator, and `cause` is the
    /// system call that failed, when one did.
    enum StartError: Error, Sendable, Equatable, CustomStringConvertible {
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
        typealias Code = ErrorCode<Daemon.StartError>

        var code: Code {
            switch self {
            case .signalsUnavailable: .signalsUnavailable
            case .socketInUse, .notASocket: .socketTaken
            case .cannotListen, .activatedSocketUnusable: .socketUnavailable
            case .serverUnavailable: .serverUnavailable
            case .stateDirectoryUntrusted: .stateDirectoryUntrusted
            }
        }

        /// What went wrong, in one line.
        var message: String {
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
        var cause: SystemError? {
            switch self {
            case .signalsUnavailable(let cause), .cannotListen(_, let cause), .activatedSocketUnusable(let cause),
                .serverUnavailable(let cause):
                cause
            case .socketInUse, .notASocket, .stateDirectoryUntrusted: nil
            }
        }

        var description: String { message }
    }
}

extension ErrorCode where Domain == Daemon.StartError {
    /// SIGTERM, SIGINT and SIGHUP could not be caught.
    static var signalsUnavailable: Self { Self("signalsUnavailable") }
    /// The socket path is served by another daemon, or holds something that is not a socket.
    static var socketTaken: Self { Self("socketTaken") }
    /// The socket could not be opened or used.
    static var socketUnavailable: Self { Self("socketUnavailable") }
    /// The socket server could not be set up.
    static var serverUnavailable: Self { Self("serverUnavailable") }
    /// The state directory could have been planted by another user.
    static var stateDirectoryUntrusted: Self { Self("stateDirectoryUntrusted") }
}
