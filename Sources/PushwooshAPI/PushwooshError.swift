/// Why a Pushwoosh call failed, with the R11 status the daemon reports.
///
/// `status` is the HTTP status of a reply other than 200; `0` when no HTTP reply came (refused, reset, DNS or
/// TLS failure, timeout) or the request was never sent; `200` when HTTP 200 came back but could not be used.
/// `reason` is for logs and `status`; it never contains the API token, because every error is built here from
/// text that never saw the token, and the client scrubs it again before handing an error out.
public struct PushwooshError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The R11 status: the HTTP status, 0, or 200.
    public var status: Int
    /// A human explanation for logs.
    public var reason: String
    /// The raw `Retry-After` header of a reply other than 200, when it had one; `RetryAfter` reads it.
    public var retryAfter: String?

    public init(status: Int, reason: String, retryAfter: String? = nil) {
        self.status = status
        self.reason = reason
        self.retryAfter = retryAfter
    }

    /// The request never left: no application code, a rejected server URL (R16).
    public static func notSent(_ reason: String) -> PushwooshError {
        PushwooshError(status: 0, reason: "not sent: \(reason)")
    }

    /// No HTTP reply arrived: refused, reset, DNS or TLS failure, timeout.
    public static func noReply(_ reason: String) -> PushwooshError {
        PushwooshError(status: 0, reason: "no reply: \(reason)")
    }

    /// An HTTP reply with a status other than 200.
    public static func httpStatus(_ status: Int, retryAfter: String? = nil) -> PushwooshError {
        PushwooshError(
            status: status, reason: "HTTP status \(status)", retryAfter: retryAfter.map { String($0.prefix(64)) })
    }

    /// Whether Pushwoosh's `Retry-After` applies to this status: 429 and the 5xx server errors (503 above all).
    public var honorsRetryAfter: Bool { status == 429 || (500...599).contains(status) }

    /// HTTP 200, but the reply cannot be used.
    public static func unusable(_ reason: String) -> PushwooshError {
        PushwooshError(status: 200, reason: "unusable: \(reason)")
    }

    public var description: String { "Pushwoosh error \(status): \(reason)" }

    /// The same error with every occurrence of `secret` replaced, so that a token can never leak into logs.
    func redacting(_ secret: String?) -> PushwooshError {
        guard let secret, !secret.isEmpty, reason.contains(secret) else { return self }
        return PushwooshError(
            status: status, reason: reason.replacing(secret, with: "<redacted>"), retryAfter: retryAfter)
    }
}
