public import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Calls Pushwoosh over HTTPS: one exchange per call, bounded in time and size, no redirects, no cookies, no cache.
///
/// Every result is a `Result` rather than a throw, because every failure has an R11 status the daemon reports.
public final class PushwooshClient: Sendable {
    /// The bound on the whole exchange, from connect to the last byte (`RequestTimeout`); a reload may change it.
    public var requestTimeout: Duration { timeout.withLock { $0 } }
    /// The largest reply body accepted.
    public let maximumReplyBytes: Int
    private let apiToken: String?
    private let timeout: Mutex<Duration>

    /// A client sending `Authorization: Token {apiToken}` when a token is given.
    public init(
        apiToken: String?, requestTimeout: Duration = .seconds(10),
        maximumReplyBytes: Int = PushwooshEnvelope.maximumBodyBytes
    ) {
        self.apiToken = apiToken
        self.timeout = Mutex(requestTimeout)
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
        }
        .mapError { $0.redacting(apiToken) }
    }

    /// Sends one event; success means HTTP 200 with envelope `status_code` 200.
    public func postEvent(base: URL, common: CommonFields, event: PushwooshEvent) async -> Result<Void, PushwooshError>
    {
        let request = PushwooshRequest.postEvent(base: base, common: common, apiToken: apiToken, event: event)
        return await send(request).flatMap { body in
            Result { () throws(PushwooshError) in _ = try PushwooshEnvelope.decode(body: body) }
        }
        .mapError { $0.redacting(apiToken) }
    }

    /// Performs `request` and returns the body of an HTTP 200 reply.
    public func send(_ request: PushwooshRequest) async -> Result<[UInt8], PushwooshError> {
        // Read once: an exchange keeps the timeout it started with.
        let timeout = requestTimeout
        let exchange = HTTPExchange(limit: maximumReplyBytes)
        let session = URLSession(configuration: configuration(timeout: timeout), delegate: exchange, delegateQueue: nil)
        // The session holds its delegate strongly until invalidated.
        defer { session.invalidateAndCancel() }
        let urlRequest = request.urlRequest(timeout: timeout)
        // URLSession's own timeouts reset on every byte; racing a sleep bounds the whole exchange.
        let outcome = await withTaskGroup(of: ExchangeOutcome.self) { group in
            group.addTask { await exchange.run(session: session, request: urlRequest) }
            group.addTask {
                do {
                    try await Task.sleep(for: timeout)
                    return .failure(.noReply("timed out after \(timeout)"))
                } catch {
                    return .failure(.noReply("cancelled"))
                }
            }
            let first = await group.next() ?? .failure(.noReply("cancelled"))
            group.cancelAll()
            return first
        }
        switch outcome {
        case .ok(let body): return .success(body)
        // The token never reaches any reason text; redacting here and after decoding is a second lock.
        case .failure(let error): return .failure(error.redacting(apiToken))
        }
    }

    private func configuration(timeout: Duration) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        configuration.timeoutIntervalForRequest = timeout.foundationBackstop
        configuration.timeoutIntervalForResource = timeout.foundationBackstop
        return configuration
    }
}
