public import FoundationEssentials
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Calls Pushwoosh over HTTPS through libcurl: one exchange per call, bounded in time and size, no redirects, no
/// cookies, no cache; the connection stays open for the next call. Certificates are checked against the system
/// store, plus `caFile` when given; libcurl honours the proxy variables (`https_proxy`, `http_proxy`,
/// `all_proxy`, `no_proxy`).
///
/// Every result is a `Result` rather than a throw, because every failure has an R11 status the daemon reports.
public final class PushwooshClient: Sendable {
    /// The bound on the whole exchange, from connect to the last byte (`RequestTimeout`); a reload may change it.
    public var requestTimeout: Duration { timeout.withLock { $0 } }
    /// The largest reply body accepted.
    public let maximumReplyBytes: Int
    private let apiToken: String?
    /// A PEM bundle of certificate authorities trusted besides the system store (`CAFile`), or nil.
    public let caFile: String?
    private let timeout: Locked<Duration>
    private let channels = CurlChannelPool()

    /// A client sending `Authorization: Token {apiToken}` when a token is given.
    public init(
        apiToken: String?, requestTimeout: Duration = .seconds(10),
        maximumReplyBytes: Int = PushwooshEnvelope.maximumBodyBytes, caFile: String? = nil
    ) {
        self.apiToken = apiToken
        self.caFile = caFile
        self.timeout = Locked(requestTimeout)
        self.maximumReplyBytes = maximumReplyBytes
    }

    /// Applies a new `RequestTimeout` to the exchanges that start from now on.
    public func update(requestTimeout: Duration) {
        timeout.withLock { $0 = requestTimeout }
    }

    /// Asks for this device's flags.
    public func getFeatureFlags(base: URL, common: CommonFields) async -> Result<FeatureFlagsResponse, PushwooshError> {
        let request = PushwooshRequest.getFeatureFlags(base: base, common: common, apiToken: apiToken)
        return await send(request).flatMap { body in
            Result { () throws(PushwooshError) in try FeatureFlagsResponse.decode(body: body) }
                .mapError { Self.keeping(body, in: $0) }
        }
        .mapError { $0.redacting(apiToken) }
    }

    /// Sends one event; success means HTTP 200 with envelope `status_code` 200, and gives the envelope (its
    /// `base_url` moves the daemon as a flag reply's does).
    public func postEvent(
        base: URL, common: CommonFields, event: PushwooshEvent
    ) async -> Result<PushwooshEnvelope, PushwooshError> {
        let request = PushwooshRequest.postEvent(base: base, common: common, apiToken: apiToken, event: event)
        return await send(request).flatMap { body in
            Result { () throws(PushwooshError) in try PushwooshEnvelope.decode(body: body) }
                .mapError { Self.keeping(body, in: $0) }
        }
        .mapError { $0.redacting(apiToken) }
    }

    /// An HTTP 200 that cannot be used keeps the start of its body, as a failed status does: its envelope may
    /// still name an address, or show that whoever answered is not Pushwoosh.
    private static func keeping(_ body: [UInt8], in error: PushwooshError) -> PushwooshError {
        var kept = error
        if kept.body.isEmpty { kept.body = Array(body.prefix(PushwooshError.failureBodyLimit)) }
        return kept
    }

    /// Performs `request` and returns the body of an HTTP 200 reply.
    ///
    /// The exchange runs on a thread of its own (`pwflagsd-curl`, ended with the exchange), never one of the
    /// task executor's, nor one of libdispatch's: a global queue would start libdispatch's workqueue monitor, a
    /// timer that wakes the daemon every second from then on (docs/performance.md, Idle wakeups). Cancelling the
    /// calling task (a reload, the daemon's stop) ends it at once.
    public func send(_ request: PushwooshRequest) async -> Result<[UInt8], PushwooshError> {
        await post(
            url: request.url.absoluteString, headers: request.headers.sorted { $0.key < $1.key }.map { "\($0): \($1)" },
            body: request.body)
    }

    /// POSTs `body` to `url` with `headers` (`Name: value` lines) as `send` does, for a peer that is not Pushwoosh
    /// (an OpenTelemetry collector): the same bounds, the same thread, the same classification of failures.
    public func post(url: String, headers: [String], body: [UInt8]) async -> Result<[UInt8], PushwooshError> {
        // Read once: an exchange keeps the timeout it started with.
        let exchangeRequest = CurlExchange.Request(
            url: url, headers: headers, body: body, timeout: requestTimeout, caFile: caFile,
            connectTo: Self.connectTo)
        let channel: CurlChannel
        do {
            channel = try channels.take()
        } catch {
            return .failure(.notSent(error.reason))
        }
        let cancellation = CurlCancellation(channel: channel)
        let limit = maximumReplyBytes
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ExchangeOutcome, Never>) in
                let started = DetachedThread.start(name: "pwflagsd-curl") {
                    let exchange = CurlExchange(channel: channel, limit: limit, cancellation: cancellation)
                    continuation.resume(returning: exchange.perform(exchangeRequest))
                }
                if !started {
                    continuation.resume(returning: .failure(.notSent("cannot start a thread for the request")))
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
        channels.give(back: channel)
        switch outcome {
        case .ok(let body): return .success(body)
        // The token never reaches any reason text; redacting here and after decoding is a second lock.
        case .failure(let error): return .failure(error.redacting(apiToken))
        }
    }

    #if DEBUG
        /// `PWFLAGSD_TEST_CONNECT_TO`, read once: `host:port:connect-host:connect-port` entries (comma-separated)
        /// that send a host's connections elsewhere, so that tests can aim the default address at a local server.
        /// Debug builds only: the release build, the one installed, has no switch that redirects where a root
        /// daemon connects (docs/development.md).
        static let connectTo: [String] = {
            guard let value = getenv("PWFLAGSD_TEST_CONNECT_TO") else { return [] }
            return String(cString: value).split(separator: ",").map(String.init)
        }()
    #else
        static let connectTo: [String] = []
    #endif
}
