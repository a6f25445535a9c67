/// A command line pwflagsd cannot run with; the caller prints it with a pointer to `--help` and exits 2.
public struct DaemonUsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, such as `unknown option '--frobnicate'`.
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
