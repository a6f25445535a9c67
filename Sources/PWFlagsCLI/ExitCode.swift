/// The CLI's exit statuses.
enum ExitCode: Int32 {
    case success = 0
    /// The flag is absent, or (for `is-enabled`) disabled; or the daemon refused the call.
    case failure = 1
    case usage = 2
    /// `EX_UNAVAILABLE`: the daemon could not be reached.
    case unavailable = 69
}
