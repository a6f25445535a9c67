import FlagsCore
import UnixIO

/// Why the local flags file could not be served: the one error of the file source, which `status.problem`, the
/// log and a failed `refresh` carry as `reason`.
///
/// `code` says what kind of failure it is, `message` (also `reason`) says it in one line, and `cause` is the
/// system call that failed, when one did.
enum LocalFlagsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A reload replaced the source, or the daemon is stopping: it serves nothing more.
    case retired
    /// No `LocalFlagsFile` is configured.
    case notConfigured
    /// The file is over the size the daemon reads.
    case tooLarge(path: String, limit: Int)
    /// The file could not be opened or read.
    case unreadable(path: String, cause: SystemError)
    /// The file is not JSON; `detail` says where it stops being JSON.
    case invalidJSON(path: String, detail: String)
    /// The file is JSON but not a `getFeatureFlags` response; `detail` says what does not fit.
    case notAFlagsResponse(path: String, detail: String)

    /// The kind of failure, for programs and tests to branch on; more may come.
    typealias Code = ErrorCode<LocalFlagsError>

    var code: Code {
        switch self {
        case .retired: .retired
        case .notConfigured: .notConfigured
        case .tooLarge, .unreadable: .unreadable
        case .invalidJSON, .notAFlagsResponse: .invalid
        }
    }

    /// What went wrong, in one line.
    var message: String {
        switch self {
        case .retired: "the flag source was replaced or is stopping"
        case .notConfigured: "no LocalFlagsFile is configured, so there are no flags to serve"
        case .tooLarge(let path, let limit): "\(path) is larger than \(limit) bytes"
        case .unreadable(let path, let cause): "cannot read \(path): \(cause.reason)"
        case .invalidJSON(let path, let detail): "\(path) is not valid JSON: \(detail)"
        case .notAFlagsResponse(let path, let detail): "\(path) is not a getFeatureFlags response: \(detail)"
        }
    }

    /// The system call that failed, when one did.
    var cause: SystemError? {
        guard case .unreadable(_, let cause) = self else { return nil }
        return cause
    }

    /// `message`, by the name the status and the log use.
    var reason: String { message }

    var description: String { message }
}

extension ErrorCode where Domain == LocalFlagsError {
    /// The source was replaced or is stopping.
    static var retired: Self { Self("retired") }
    /// There is no file to read.
    static var notConfigured: Self { Self("notConfigured") }
    /// The file could not be read, or is too large to.
    static var unreadable: Self { Self("unreadable") }
    /// The file was read but does not hold flags.
    static var invalid: Self { Self("invalid") }
}
