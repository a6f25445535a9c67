import TestSupport
import Testing

/// One upstream fault of the R11 matrix: what the fake Pushwoosh does, and the status a refresh must report.
struct UpstreamFault: Sendable, CustomTestStringConvertible {
    /// How the daemon reaches the server while it misbehaves.
    enum Transport: Sendable {
        /// `http://` to the fake server, which answers with `reply`.
        case reply(FakeReply)
        /// The server is stopped: nothing listens on the port.
        case refused
        /// `https://` to the fake server's plain-HTTP port: the TLS handshake fails.
        case tlsToPlainHTTP
    }

    var name: String
    var transport: Transport
    /// The R11 status of `refresh`'s error and `status.lastError`.
    var status: Int
    /// `RequestTimeout` for this case; short where the fault is a server that never finishes.
    var requestTimeout: Duration = .seconds(3)

    var testDescription: String { "\(name) → status \(status)" }

    /// A redirect target the daemon must not follow: were it followed, nothing listens there (status 0).
    static let elsewhere = "http://127.0.0.1:9/json/1.3/getFeatureFlags"

    /// Every upstream fault of the table in docs/reliability.md, When Pushwoosh misbehaves.
    static let all: [UpstreamFault] = [
        UpstreamFault(name: "connection refused", transport: .refused, status: 0),
        UpstreamFault(name: "reset in the middle of the body", transport: .reply(.resetMidBody), status: 0),
        UpstreamFault(
            name: "accepts and never answers", transport: .reply(.hang), status: 0,
            requestTimeout: .milliseconds(500)),
        UpstreamFault(name: "HTTP 500", transport: .reply(.status(500, body: "oops")), status: 500),
        UpstreamFault(name: "HTTP 502", transport: .reply(.status(502, body: "bad gateway")), status: 502),
        UpstreamFault(name: "HTTP 503", transport: .reply(.status(503, body: "busy")), status: 503),
        UpstreamFault(name: "HTTP 429", transport: .reply(.status(429, body: "slow down")), status: 429),
        UpstreamFault(name: "HTTP 200 with garbage", transport: .reply(.raw("<html>not json</html>")), status: 200),
        UpstreamFault(name: "truncated body (Content-Length too large)", transport: .reply(.truncated), status: 0),
        UpstreamFault(name: "50 MiB body", transport: .reply(.huge(bytes: 50 * 1024 * 1024)), status: 200),
        UpstreamFault(
            name: "body dripping a byte every 10 ms",
            transport: .reply(.drip(bytes: 1000, interval: .milliseconds(10))),
            status: 0, requestTimeout: .milliseconds(500)),
        UpstreamFault(name: "302 redirect", transport: .reply(.redirect(to: elsewhere, status: 302)), status: 302),
        UpstreamFault(name: "307 redirect", transport: .reply(.redirect(to: elsewhere, status: 307)), status: 307),
        UpstreamFault(name: "TLS to a plain-HTTP port", transport: .tlsToPlainHTTP, status: 0),
    ]
}
