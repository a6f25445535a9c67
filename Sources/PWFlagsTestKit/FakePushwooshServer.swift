import FlagsCore
public import Foundation
import Glibc
import UnixIO

/// A fake Pushwoosh json/1.3 server on 127.0.0.1: real HTTP/1.1 over TCP, one thread per connection.
///
/// It records every request in order and answers each from a queue of scripted replies (per API method
/// first, then for any method), falling back to a default. Every reply carries `Connection: close`.
/// `stop()` closes the listener and every connection; hung handlers end with it.
public final class FakePushwooshServer: Sendable {
    /// A scripted reply's key for "any method".
    private static let anyMethod = ""

    private struct Waiter {
        var count: Int
        var continuation: CheckedContinuation<[RecordedRequest]?, Never>
    }

    private struct State {
        var requests: [RecordedRequest] = []
        /// When each of `requests` arrived.
        var arrivals: [ContinuousClock.Instant] = []
        var queues: [String: [FakeReply]] = [:]
        var defaults: [String: FakeReply] = [:]
        var connections: Set<Int32> = []
        var waiters: [Int: Waiter] = [:]
        var abandonedWaiters: Set<Int> = []
        var nextWaiterID = 0
        var stopped = false
    }

    /// The ephemeral port the server listens on.
    public let port: UInt16
    private let listener: Int32
    private let state = Locked(State())

    private init(listener: Int32, port: UInt16) {
        self.listener = listener
        self.port = port
    }

    /// Starts a server on an ephemeral port; call `stop()` when done.
    public static func start() throws -> FakePushwooshServer {
        BrokenPipe.ignore()
        // A client that gives up mid-reply must not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        let (fd, port) = try LoopbackSocket.bound()
        guard listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw LoopbackSocket.Failure(call: "listen", code: code)
        }
        let server = FakePushwooshServer(listener: fd, port: port)
        Thread { server.acceptLoop() }.start()
        return server
    }

    /// `http://127.0.0.1:{port}/json/1.3/`.
    public var baseURL: URL {
        URL(string: "http://127.0.0.1:\(port)/json/1.3/") ?? URL(fileURLWithPath: "/")
    }

    /// Every request received so far, in order.
    public var requests: [RecordedRequest] { state.withLock { $0.requests } }

    /// Every request received so far with the moment it arrived, in order.
    public var timedRequests: [(request: RecordedRequest, at: ContinuousClock.Instant)] {
        state.withLock { Array(zip($0.requests, $0.arrivals)) }
    }

    /// Queues `reply` for the next request to `method` (`getFeatureFlags`, `postEvent`), or to any method when nil.
    public func enqueue(_ reply: FakeReply, for method: String? = nil) {
        state.withLock { $0.queues[method ?? Self.anyMethod, default: []].append(reply) }
    }

    /// The reply when no queue has one: for `method`, or for any method when nil. Initially `.flags([])`.
    public func setDefaultReply(_ reply: FakeReply, for method: String? = nil) {
        state.withLock { $0.defaults[method ?? Self.anyMethod] = reply }
    }

    /// Waits until at least `count` requests arrived and returns all of them, or throws after `timeout`.
    public func waitForRequests(count: Int, timeout: Duration = .seconds(10)) async throws -> [RecordedRequest] {
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        let result = await withDeadline(timeout) { await self.requests(atLeast: count, waiterID: id) }
        guard let result else { throw FakeServerError.timedOut(expected: count, received: requests.count) }
        return result
    }

    /// Closes the listener and every connection, and fails every waiter.
    public func stop() {
        let waiters = state.withLock { state -> [Waiter] in
            guard !state.stopped else { return [] }
            state.stopped = true
            // shutdown wakes the threads blocked in accept and recv; each closes its own descriptor, under the
            // lock, so a descriptor number is never shut down after it was reused.
            shutdown(listener, Int32(SHUT_RDWR))
            for fd in state.connections { shutdown(fd, Int32(SHUT_RDWR)) }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    deinit {
        stop()
    }

    private func requests(atLeast count: Int, waiterID id: Int) async -> [RecordedRequest]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[RecordedRequest]?, Never>) in
                let ready: [RecordedRequest]?? = state.withLock { state in
                    if state.abandonedWaiters.remove(id) != nil || state.stopped { return .some(nil) }
                    if state.requests.count >= count { return .some(state.requests) }
                    state.waiters[id] = Waiter(count: count, continuation: continuation)
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
                state.abandonedWaiters.insert(id)
                return nil
            }
            waiter?.continuation.resume(returning: nil)
        }
    }

    // MARK: Connections

    private func acceptLoop() {
        var accepted = 0
        while true {
            let fd: Int32
            do {
                fd = try syscall("accept") { accept(listener, nil, nil) }
            } catch  where error.errno == ECONNABORTED {
                continue
            } catch {
                break
            }
            let registered = state.withLock { state in
                guard !state.stopped else { return false }
                state.connections.insert(fd)
                return true
            }
            guard registered else {
                close(fd)
                break
            }
            accepted += 1
            let connection = accepted
            Thread { self.serve(fd, connection: connection) }.start()
        }
        close(listener)
    }

    private func serve(_ fd: Int32, connection: Int) {
        defer {
            state.withLock { state in
                state.connections.remove(fd)
                close(fd)
            }
        }
        LoopbackSocket.setReceiveTimeout(fd, seconds: 30)
        var request: RecordedRequest
        switch HTTPRequestReader.read(from: fd) {
        case .request(let received): request = received
        case .malformed(let status):
            _ = LoopbackSocket.sendAll(fd, Self.head(status: status, contentLength: 0))
            return
        case .closed: return
        }
        request.connection = connection
        let reply = record(request)
        perform(reply, on: fd)
    }

    /// Records `request`, wakes satisfied waiters, and picks its reply.
    private func record(_ request: RecordedRequest) -> FakeReply {
        let (reply, ready, requests) = state.withLock { state -> (FakeReply, [Waiter], [RecordedRequest]) in
            state.requests.append(request)
            state.arrivals.append(ContinuousClock.now)
            let ready = state.waiters.filter { $0.value.count <= state.requests.count }
            for id in ready.keys { state.waiters.removeValue(forKey: id) }
            let method = request.apiMethod
            let reply: FakeReply
            if let next = state.queues[method]?.first {
                state.queues[method]?.removeFirst()
                reply = next
            } else if let next = state.queues[Self.anyMethod]?.first {
                state.queues[Self.anyMethod]?.removeFirst()
                reply = next
            } else {
                reply = state.defaults[method] ?? state.defaults[Self.anyMethod] ?? .flags([])
            }
            return (reply, Array(ready.values), state.requests)
        }
        for waiter in ready { waiter.continuation.resume(returning: requests) }
        return reply
    }
}

/// Why a wait on the fake server failed.
public enum FakeServerError: Error, Sendable, Equatable {
    /// Fewer than `expected` requests arrived in time.
    case timedOut(expected: Int, received: Int)
}
