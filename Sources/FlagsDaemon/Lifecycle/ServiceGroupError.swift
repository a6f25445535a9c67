/// Why a service group ended before it was asked to: a service's `run()` returned or threw while the daemon was
/// still serving. The daemon then shuts down the other services and exits non-zero, so that systemd restarts it
/// instead of leaving a process that serves nothing.
public struct ServiceGroupError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure, for programs and tests to branch on; more may come.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let description: String

        /// A service's `run()` returned or threw before shutdown began.
        public static let serviceEndedUnexpectedly = Code(description: "serviceEndedUnexpectedly")
    }

    public var code: Code
    /// The service that ended, by its `name`.
    public var service: String
    /// What `run()` threw; nil when it returned.
    public var cause: (any Error)?

    /// What went wrong, in one line: which service ended and why.
    public var message: String {
        if let cause { return "the service \(service) failed: \(cause)" }
        return "the service \(service) ended before shutdown was asked for"
    }

    public var description: String { message }

    static func serviceEnded(_ service: String, cause: (any Error)?) -> ServiceGroupError {
        ServiceGroupError(code: .serviceEndedUnexpectedly, service: service, cause: cause)
    }
}
