public import FlagsCore

/// What the fake Pushwoosh server does with one request.
public indirect enum FakeReply: Sendable {
    /// HTTP 200, envelope 200, `response: {"flags": [...], "partial": ...}`, with `base_url` when given.
    case flags([Flag], partial: Bool = false, baseURL: String? = nil)
    /// HTTP 200, envelope 200, `response: null`: what `postEvent` answers.
    case ok
    /// Any HTTP status with the given body.
    case status(Int, body: String = "")
    /// HTTP 200 with an envelope whose `status_code` is the given one.
    case envelopeStatus(Int)
    /// HTTP 200 with any body, garbage included.
    case raw(String)
    /// Waits, then answers with the other reply; a client that leaves ends the wait.
    case delay(Duration, then: FakeReply)
    /// Closes the connection without a byte.
    case drop
    /// Sends headers and part of the body, then resets the connection.
    case resetMidBody
    /// HTTP 200 announcing a longer body than it sends, then a clean close (FIN, not a reset).
    case truncated
    /// Never answers; ends when the client leaves or the server stops.
    case hang
    /// HTTP 200 with a valid envelope padded to `bytes` bytes, streamed so the server never holds it.
    case huge(bytes: Int)
    /// HTTP 200 announcing `bytes` bytes, sent one byte per `interval`.
    case drip(bytes: Int, interval: Duration)
    /// A redirect to `location`.
    case redirect(to: String, status: Int = 302)
    /// Pushwoosh overloaded: the status (429, 503) with a `Retry-After` header of the given text.
    case retryAfter(Int, value: String)
    /// The same with an HTTP-date (IMF-fixdate) `seconds` ahead of the wall clock's whole second when the reply
    /// is sent, so that a slow start of the daemon does not shorten the hold a test expects.
    case retryAfterDate(Int, secondsAhead: Int)

    /// The envelope of a successful reply around `response`.
    public static func envelope(response: JSONValue, baseURL: String? = nil) -> JSONValue {
        var members: [String: JSONValue] = ["status_code": 200, "status_message": "OK", "response": response]
        if let baseURL { members["base_url"] = .string(baseURL) }
        return .object(members)
    }

    /// A flag as `getFeatureFlags` sends it.
    public static func json(of flag: Flag) -> JSONValue {
        [
            "key": .string(flag.key),
            "enabled": .bool(flag.isEnabled),
            "rule_id": .string(flag.ruleId),
            "properties": .object(flag.properties),
        ]
    }
}
