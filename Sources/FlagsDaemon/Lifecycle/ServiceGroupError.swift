import FlagsCore

/// Why a service group ended before it was asked to: a service's `run()` returned or threw while the daemon was
/// still serving. The daemon then shuts down the other services and exits non-zero, so that systemd restarts it
/// instead of leaving a process that serves nothing.
public struct ServiceGroupError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure, for programs and tests to branch on; more may come.
    typealias Code = ErrorCode<ServiceGroupError>

    var code: Code
    /// The service that ended, by its `name`.
    var service: String
    /// What `run()` threw; nil when it returned.
    var cause: (any Error)?

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

extension ErrorCode where Domain == ServiceGroupError {
    /// A service's `run()` returned or threw before shutdown began.
    static var serviceEndedUnexpectedly: Self { Self("serviceEndedUnexpectedly") }
}
