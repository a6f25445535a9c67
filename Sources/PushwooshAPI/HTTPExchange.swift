import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How one HTTP exchange ended, before the reply body is interpreted.
enum ExchangeOutcome: Sendable {
    /// HTTP 200 with its complete body, at most the byte limit.
    case ok([UInt8])
    /// Anything else, already classified by R11 status.
    case failure(PushwooshError)
}

/// One request's URLSession delegate: collects the body incrementally, refuses redirects, and cancels the task
/// as soon as the body passes the limit, so a huge reply is never held in memory.
///
/// `@unchecked Sendable` because URLSession calls the delegate on its own queue while the awaiting task (through
/// cancellation) and the timeout finish the exchange from others; every mutable piece lives in `state`, behind a
/// `Mutex`, and the continuation is resumed exactly once, outside the lock.
final class HTTPExchange: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct State {
        var continuation: CheckedContinuation<ExchangeOutcome, Never>?
        var task: URLSessionDataTask?
        var body: [UInt8] = []
        /// Set once; an outcome that arrives before the continuation is installed waits here.
        var outcome: ExchangeOutcome?
    }

    private let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// Runs `request` on `session` (whose delegate is `self`) until it ends or the calling task is cancelled.
    func run(session: URLSession, request: URLRequest) async -> ExchangeOutcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ExchangeOutcome, Never>) in
                let task = session.dataTask(with: request)
                let early: ExchangeOutcome? = state.withLock { state in
                    if let outcome = state.outcome { return outcome }
                    state.continuation = continuation
                    state.task = task
                    return nil
                }
                if let early {
                    continuation.resume(returning: early)
                } else {
                    task.resume()
                }
            }
        } onCancel: {
            finish(.failure(.noReply("cancelled")))
        }
    }

    /// Ends the exchange with `outcome` unless it already ended; cancels the URL task if it still runs.
    func finish(_ outcome: ExchangeOutcome) {
        typealias Pending = (CheckedContinuation<ExchangeOutcome, Never>?, URLSessionDataTask?)
        let (continuation, task) = state.withLock { state -> Pending in
            guard state.outcome == nil else { return (nil, nil) }
            state.outcome = outcome
            state.body = []
            defer {
                state.continuation = nil
                state.task = nil
            }
            return (state.continuation, state.task)
        }
        task?.cancel()
        continuation?.resume(returning: outcome)
    }

    // MARK: URLSessionDataDelegate

    /// Decides on the headers alone whether the body is worth reading: not for a failed status (R11 needs only
    /// the status) and not for a body announced over the limit, so that neither is ever read into memory.
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if let http = response as? HTTPURLResponse, http.statusCode != 200 {
            finish(.failure(Self.failure(http)))
            completionHandler(.cancel)
            return
        }
        if response.expectedContentLength > Int64(limit) {
            finish(.failure(.unusable("reply over \(limit / (1024 * 1024)) MiB")))
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if let http = dataTask.response as? HTTPURLResponse, http.statusCode != 200 {
            // The status (and Retry-After) is all R11 and F3 need from a failed reply; its body is not read.
            finish(.failure(Self.failure(http)))
            return
        }
        let overflow = state.withLock { state -> Bool in
            guard state.outcome == nil else { return false }
            guard state.body.count + data.count <= limit else { return true }
            state.body.append(contentsOf: data)
            return false
        }
        if overflow { finish(.failure(.unusable("reply over \(limit / (1024 * 1024)) MiB"))) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // Never follow: a redirect could carry the token to another host. The 3xx reply then completes the task
        // and is reported with its status.
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let status = (task.response as? HTTPURLResponse)?.statusCode
        if let http = task.response as? HTTPURLResponse, http.statusCode != 200 {
            finish(.failure(Self.failure(http)))
            return
        }
        if let error {
            finish(.failure(.noReply(Self.describe(error))))
            return
        }
        guard status != nil else {
            finish(.failure(.noReply("no HTTP response")))
            return
        }
        let body = state.withLock { $0.body }
        finish(.ok(body))
    }

    /// A reply other than 200: its status and its raw `Retry-After` header (F3).
    private static func failure(_ http: HTTPURLResponse) -> PushwooshError {
        .httpStatus(http.statusCode, retryAfter: http.value(forHTTPHeaderField: "Retry-After"))
    }

    /// A short text for a transport error; URL errors carry only the URL, never a header.
    private static func describe(_ error: any Error) -> String {
        if let urlError = error as? URLError {
            return "\(urlError.localizedDescription) (URLError \(urlError.code.rawValue))"
        }
        return String(describing: error)
    }
}
