import FlagsCore

/// Why a Pushwoosh call failed, with the R11 status the daemon reports.
///
/// `status` is the HTTP status of a reply other than 200; `0` when no HTTP reply came (refused, reset, DNS or
/// TLS failure, timeout) or the request was never sent; `200` when HTTP 200 came back but could not be used.
/// `kind` says which of those, finer than the status. `reason` is for logs and `status`; it never contains the
/// API token, because every error is built here from text that never saw the token, and the client scrubs it
/// again before handing an error out.
public struct PushwooshError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The R11 status: the HTTP status, 0, or 200.
    public var status: Int
    /// Why, as one of a few words an operator and a metrics label can rely on.
    public var kind: Kind
    /// A human explanation for logs.
    public var reason: String
    /// The raw `Retry-After` header of a failed reply, as the server sent it; nil when absent.
    public var retryAfter: String?
    /// The first bytes of a failed reply's body (at most ``failureBodyLimit``), so that Pushwoosh's envelope
    /// can be read from it; empty when no reply or no body came.
    public var body: [UInt8]

    /// How much of a failed reply's body is kept.
    public static let failureBodyLimit = 64 * 1024

    /// Why a call failed, finer than its R11 status; the raw value is what `status`, `explain`, the log and
    /// the metrics show.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// The request never left (no application code, a rejected server URL).
        case notSent
        /// The host name could not be resolved (nor the proxy's).
        case dns
        /// The connection was refused or could not be made.
        case connect
        /// The TLS handshake failed, the certificate was not trusted or did not match the host.
        case tls
        /// The whole exchange took longer than `RequestTimeout`.
        case timeout
        /// The reply was larger than the limit.
        case tooLarge
        /// A reload or the daemon's stop ended the exchange.
        case cancelled
        /// The connection broke or the server's reply was not HTTP.
        case network
        /// An HTTP reply with a status other than 200.
        case http
        /// HTTP 200, but the body could not be used.
        case unusable
    }

    public init(
        status: Int, kind: Kind? = nil, reason: String, retryAfter: String? = nil, body: [UInt8] = []
    ) {
        self.status = status
        self.kind = kind ?? (status == 0 ? .network : status == 200 ? .unusable : .http)
        self.reason = reason
        self.retryAfter = retryAfter
        self.body = body
    }

    /// The request never left: no application code, a rejected server URL (R16).
    public static func notSent(_ reason: String) -> PushwooshError {
        PushwooshError(status: 0, kind: .notSent, reason: "not sent: \(reason)")
    }

    /// No HTTP reply arrived: refused, reset, DNS or TLS failure, timeout.
    public static func noReply(_ reason: String, kind: Kind = .network) -> PushwooshError {
        PushwooshError(status: 0, kind: kind, reason: "no reply: \(reason)")
    }

    /// An HTTP reply with a status other than 200, with its `Retry-After` and the start of its body.
    public static func httpStatus(_ status: Int, retryAfter: String? = nil, body: [UInt8] = []) -> PushwooshError {
        PushwooshError(
            status: status, kind: .http, reason: "HTTP status \(status)",
            retryAfter: retryAfter.map { String($0.prefix(64)) },
            body: body)
    }

    /// Whether Pushwoosh's `Retry-After` applies to this status: 429 and the 5xx server errors (503 above all).
    public var honorsRetryAfter: Bool { status == 429 || (500...599).contains(status) }

    /// The wait Pushwoosh asked for, in seconds from `now` (Unix seconds, for an HTTP-date), when this status
    /// honours a `Retry-After` and the reply carried a readable one; nil otherwise.
    public func retryAfterSeconds(now: Double) -> Double? {
        guard honorsRetryAfter, let retryAfter else { return nil }
        return RetryAfter.seconds(retryAfter, now: now)
    }

    /// HTTP 200, but the reply cannot be used.
    public static func unusable(_ reason: String, kind: Kind = .unusable) -> PushwooshError {
        PushwooshError(status: 200, kind: kind, reason: "unusable: \(reason)")
    }

    public var description: String { "Pushwoosh error \(status) (\(kind.rawValue)): \(reason)" }

    /// The same error with every occurrence of `secret` replaced, so that a token can never leak into logs.
    /// A failed reply's body that echoes the token is dropped whole: it is bytes, not text to mend.
    func redacting(_ secret: String?) -> PushwooshError {
        guard let secret, !secret.isEmpty else { return self }
        var redacted = self
        if reason.contains(secret) { redacted.reason = reason.replacing(secret, with: "<redacted>") }
        if body.count >= secret.utf8.count, body.firstRange(of: Array(secret.utf8)) != nil { redacted.body = [] }
        return redacted
    }
}
