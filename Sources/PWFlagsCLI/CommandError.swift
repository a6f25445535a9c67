import FeatureFlags

/// Why a command did not succeed, mapped to an exit status.
enum CommandError: Error {
    /// The command line is wrong; the message says how.
    case usage(String)
    /// The daemon could not be asked, or refused; printed as the client library describes it.
    case client(ClientError)

    /// The exit status: 2 for usage, 69 when the daemon could not be reached, 1 otherwise.
    var exitCode: ExitCode {
        switch self {
        case .usage: .usage
        case .client(let error):
            error.code == .unreachable || error.code == .disconnected ? .unavailable : .failure
        }
    }

    /// What the CLI prints.
    var message: String {
        switch self {
        case .usage(let message): message
        case .client(let error): error.description
        }
    }
}
