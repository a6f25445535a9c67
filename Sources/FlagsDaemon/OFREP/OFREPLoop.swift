import FlagsCore
import OFREP
import Synchronization
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The OFREP listener's event loop: one thread, epoll, non-blocking sockets, apart from the line protocol's.
///
/// Every answer is computed on this thread from the store's current snapshot (no request waits on anything),
/// so a connection is a parser, an output buffer and a deadline. Other threads only ask it to stop, through an
/// eventfd. Bounded: `maxConnections` (more get 503 and are closed), the parser's head and body limits, the
/// idle deadline (a slow or silent client is closed, 408 if it was mid-request), and `maxPendingBytes` of
/// answers per connection (past it the connection's next requests wait unread until the client reads).
final class OFREPLoop: @unchecked Sendable {
    private let stopRequested = Mutex(false)
    private let wake: EventFD
    private let epoll: Epoll
    private let listenFD: Int32
    private let isTCP: Bool
    private let store: FlagStore
    private let responder: OFREPResponder
    private let limits: OFREPLimits
    private let logger: Logger
    private let metrics: DaemonMetrics

    // Loop thread only.
    private var limiter: OFREPRateLimiter
    private var connections: [Int32: OFREPConnection] = [:]
    private var cached: (snapshot: FlagSnapshot, flags: OFREPFlags)?
    private var readBuffer = [UInt8](repeating: 0, count: 16384)
    private let events = Epoll.Buffer(capacity: 64)
    private var acceptPausedUntil: UInt64?
    /// Refusals past `maxConnections` reach the log at most once a second, however many a flood makes.
    private var refusedConnections = LogThrottle()

    /// The longest the loop flushes answers at shutdown.
    static let drainTimeout: UInt64 = 1_000_000_000

    init(
        listenFD: Int32, isTCP: Bool, store: FlagStore, token: [UInt8]?, limits: OFREPLimits, logger: Logger,
        metrics: DaemonMetrics
    ) throws(SystemError) {
        let epoll = try Epoll()
        let wake: EventFD
        do {
            wake = try EventFD()
            try epoll.add(wake.descriptor, events: .input)
            try epoll.add(listenFD, events: .input)
        } catch {
            epoll.close()
            throw error
        }
        self.epoll = epoll
        self.wake = wake
        self.listenFD = listenFD
        self.isTCP = isTCP
        self.store = store
        self.responder = OFREPResponder(token: isTCP ? token : nil)
        self.limits = limits
        self.limiter = OFREPRateLimiter(perSecond: limits.requestRate)
        self.logger = logger
        self.metrics = metrics
    }

    deinit {
        wake.close()
        epoll.close()
    }

    /// Asks the loop to stop, from any thread.
    func stop() {
        stopRequested.withLock { $0 = true }
        wake.ring()
    }

    /// Serves until `stop()`; then flushes what is queued (briefly) and closes every connection and the
    /// listening socket.
    func run() {
        while !stopRequested.withLock({ $0 }) {
            let count: Int
            do {
                count = try epoll.wait(into: events, timeout: nextTimeout())
            } catch {
                logger.error("OFREP: epoll_wait failed; the listener stops", ["ERRNO": String(error.errno)])
                break
            }
            for index in 0..<count {
                let event = events[index]
                if event.descriptor == wake.descriptor {
                    wake.drain()
                } else if event.descriptor == listenFD {
                    acceptConnections()
                } else if let connection = connections[event.descriptor] {
                    handle(event.events, on: connection)
                }
            }
            let now = Self.now()
            if let paused = acceptPausedUntil, now >= paused {
                acceptPausedUntil = nil
                try? epoll.add(listenFD, events: .input)
            }
            for connection in Array(connections.values) where now >= connection.deadline {
                expire(connection)
            }
        }
        drain()
        close(listenFD)
    }

    // MARK: Connections

    private func acceptConnections() {
        while true {
            let fd: Int32
            do {
                guard let accepted = try UnixSocket.accept(listenFD) else { return }
                fd = accepted
            } catch {
                // A client that gave up while queued: take the next one.
                if error.errno == ECONNABORTED { continue }
                // Out of descriptors, or a failure that would repeat: stop accepting for a moment rather than
                // spin on a listener that stays ready.
                logger.warning("OFREP: accept failed; not accepting for 100 ms", ["ERRNO": String(error.errno)])
                epoll.remove(listenFD)
                acceptPausedUntil = Self.now() + 100_000_000
                return
            }
            guard connections.count < limits.maxConnections else {
                if let count = refusedConnections.record(now: Self.now()) {
                    logger.notice(
                        "OFREP: refused connections past ConnectionLimit",
                        ["CONNECTIONS": String(connections.count), "REFUSED": String(count)])
                }
                let answer = OFREPResponder.error(
                    503, details: "too many OFREP connections", headers: [("Retry-After", "1")])
                _ = answer.serialized(closing: true).withUnsafeBytes { UnixSocket.send(fd, $0) }
                close(fd)
                continue
            }
            try? UnixSocket.setNonBlocking(fd)
            let peer: String
            if isTCP {
                InetSocket.setNoDelay(fd)
                peer = "ip:" + (InetSocket.peerHost(fd) ?? "?")
            } else {
                peer = "uid:" + ((try? UnixSocket.peerCredentials(fd)).map { String($0.uid) } ?? "?")
            }
            let connection = OFREPConnection(
                fd: fd, peer: peer,
                parser: HTTPRequestParser(maximumHeadBytes: limits.maxHeadBytes, maximumBodyBytes: limits.maxBodyBytes),
                deadline: Self.now() + limits.idleTimeout)
            do {
                try epoll.add(fd, events: [.input, .readHangup])
            } catch {
                close(fd)
                continue
            }
            connections[fd] = connection
        }
    }

    private func handle(_ ready: Epoll.Events, on connection: OFREPConnection) {
        if ready.contains(.error) {
            closeConnection(connection)
            return
        }
        if ready.contains(.output) {
            flush(connection)
            guard connections[connection.fd] === connection else { return }
        }
        if ready.contains(.input) || ready.contains(.hangup) || ready.contains(.readHangup) {
            read(connection)
        }
    }

    /// Reads once, answers what is complete, sends.
    private func read(_ connection: OFREPConnection) {
        guard connection.pendingCount == 0, !connection.closesAfterFlush else { return }
        let result = readBuffer.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try Descriptor.readAvailable(connection.fd, into: raw) }
        }
        switch result {
        case .failure:
            closeConnection(connection)
            return
        case .success(nil):
            return
        case .success(0):
            // The client finished sending; what it sent is still answered, then the connection ends.
            connection.closesAfterFlush = true
            answer(connection, endOfInput: true)
        case .success(let count?):
            connection.parser.append(readBuffer[0..<count])
            answer(connection, endOfInput: false)
        }
        flush(connection)
    }

    /// Answers the whole requests the parser holds, until the connection has `maxPendingBytes` queued.
    private func answer(_ connection: OFREPConnection, endOfInput: Bool) {
        while connection.pendingCount < limits.maxPendingBytes {
            switch connection.parser.next() {
            case .incomplete:
                return
            case .continueExpected:
                connection.enqueue(HTTPResponse.continueBytes)
            case .failure(let failure):
                logger.debug(
                    "OFREP: request refused", ["HTTP_STATUS": String(failure.status), "REASON": failure.reason])
                connection.enqueue(OFREPResponder.refusal(failure), closing: true)
                metrics.ofrepAnswered(endpoint: "other", status: failure.status)
                connection.closesAfterFlush = true
                return
            case .request(let request):
                let response = responder.respond(
                    to: request, flags: { currentFlags() },
                    admit: { limiter.admit(connection.peer, now: Double(Self.now()) / 1e9) })
                metrics.ofrepAnswered(endpoint: OFREPResponder.endpoint(of: request.path), status: response.status)
                let closing = !request.keepsAlive || endOfInput || stopRequested.withLock { $0 }
                connection.enqueue(response, closing: closing)
                connection.deadline = Self.now() + limits.idleTimeout
                if closing {
                    connection.closesAfterFlush = true
                    return
                }
            }
        }
    }

    /// The OFREP form of the store's current flags, rebuilt only when the snapshot changed.
    private func currentFlags() -> OFREPFlags {
        let snapshot = store.current
        if let cached, cached.snapshot === snapshot { return cached.flags }
        let flags = OFREPFlags(snapshot.flags)
        cached = (snapshot, flags)
        return flags
    }

    /// Sends what the socket takes; watches for writability while some remains, and answers the requests
    /// that waited behind a full buffer once it empties.
    private func flush(_ connection: OFREPConnection) {
        while let first = connection.output.first {
            let outcome = first.withUnsafeBytes { raw in
                UnixSocket.send(connection.fd, UnsafeRawBufferPointer(rebasing: raw[connection.outputOffset...]))
            }
            switch outcome {
            case .sent(let count):
                connection.sent(count)
            case .wouldBlock:
                watch(connection, .output)
                return
            case .failed:
                closeConnection(connection)
                return
            }
        }
        if connection.closesAfterFlush {
            closeConnection(connection, drainingInput: true)
            return
        }
        // Requests that arrived behind a full buffer come next, before anything more is read.
        if connection.parser.bufferedCount > 0 {
            answer(connection, endOfInput: false)
            if connection.pendingCount > 0 {
                flush(connection)
                return
            }
        }
        watch(connection, [.input, .readHangup])
    }

    private func watch(_ connection: OFREPConnection, _ events: Epoll.Events) {
        guard connection.watching != events else { return }
        connection.watching = events
        do {
            try epoll.modify(connection.fd, events: events)
        } catch {
            closeConnection(connection)
        }
    }

    /// Past the deadline: a connection between requests just closes; one in the middle of a request gets 408.
    private func expire(_ connection: OFREPConnection) {
        if !connection.parser.isIdle, connection.pendingCount == 0, !connection.closesAfterFlush {
            let answer = OFREPResponder.error(408, details: "the request did not arrive in time")
            _ = answer.serialized(closing: true).withUnsafeBytes { UnixSocket.send(connection.fd, $0) }
        }
        closeConnection(connection, drainingInput: true)
    }

    /// Closes a connection. With `drainingInput`, unread bytes are read away first, so that the kernel ends the
    /// stream with FIN rather than a reset that could destroy the last answer before the client reads it.
    private func closeConnection(_ connection: OFREPConnection, drainingInput: Bool = false) {
        guard connections.removeValue(forKey: connection.fd) != nil else { return }
        epoll.remove(connection.fd)
        if drainingInput {
            _ = shutdown(connection.fd, Int32(SHUT_WR))
            for _ in 0..<4 {
                let count: Int? = readBuffer.withUnsafeMutableBytes { raw in
                    (try? Descriptor.readAvailable(connection.fd, into: raw)) ?? nil
                }
                guard let count, count > 0 else { break }
            }
        }
        close(connection.fd)
    }

    /// At shutdown: stop accepting, send what is queued for up to `drainTimeout`, close everything.
    private func drain() {
        epoll.remove(listenFD)
        let deadline = Self.now() + Self.drainTimeout
        for connection in Array(connections.values) where connection.pendingCount == 0 {
            closeConnection(connection)
        }
        while !connections.isEmpty, Self.now() < deadline {
            let timeout = Int32(min(100, (deadline - Self.now()) / 1_000_000 + 1))
            guard let count = try? epoll.wait(into: events, timeout: timeout) else { break }
            for index in 0..<count {
                if let connection = connections[events[index].descriptor] { flush(connection) }
            }
            for connection in Array(connections.values) where connection.pendingCount == 0 {
                closeConnection(connection)
            }
        }
        for connection in Array(connections.values) { closeConnection(connection) }
    }

    // MARK: Time

    private func nextTimeout() -> Int32 {
        var earliest = acceptPausedUntil ?? UInt64.max
        for connection in connections.values { earliest = min(earliest, connection.deadline) }
        guard earliest != UInt64.max else { return -1 }
        let now = Self.now()
        guard earliest > now else { return 0 }
        return Int32(min(UInt64(Int32.max), (earliest - now + 999_999) / 1_000_000))
    }

    static func now() -> UInt64 { MonotonicClock.nanoseconds() }
}
