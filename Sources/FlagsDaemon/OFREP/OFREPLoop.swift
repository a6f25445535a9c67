import FlagsCore
import OFREP
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
///
/// Event streams (ADR-0008): the store rings the eventfd on every change; the loop then compares the bulk
/// answer's tag with the last one announced and sends a `refetchEvaluation` event to every stream. Streams are
/// bounded apart: `maxStreams`, a heartbeat that finds dead peers, a maximum age, and a cut for a reader more
/// than `maxStreamPendingBytes` behind.
final class OFREPLoop: @unchecked Sendable {
    private let stopRequested = Locked(false)
    private let wake: EventFD
    private let epoll: Epoll
    private let listenFD: Int32
    private let isTCP: Bool
    private let store: FlagStore
    private let responder: OFREPResponder
    private let limits: OFREPLimits
    private let logger: Logger
    private let bell: OFREPChangeBell
    /// Where TCP clients reach the listener (`http://127.0.0.1:8016`), for the stream URL; nil on a Unix socket.
    private let streamOrigin: String?
    private let metrics: DaemonMetrics

    // Loop thread only.
    private var limiter: OFREPRateLimiter
    private var connections: [Int32: OFREPConnection] = [:]
    private var flags: OFREPFlagsCache
    private var readBuffer = [UInt8](repeating: 0, count: 16384)
    private let events = Epoll.Buffer(capacity: 64)
    private var acceptPausedUntil: UInt64?
    private var acceptedCount: UInt64 = 0
    /// Refusals past `maxConnections` reach the log at most once a second, however many a flood makes.
    private var refusedConnections = LogThrottle()
    private var streams: OFREPEventStreams
    private var streamCount = 0
    /// The bulk answer with its `eventStreams`, for the flags tag and channel it was built from.
    private var advertised: (source: EntityTag, channel: String, flags: OFREPFlags)?

    /// The longest the loop flushes answers at shutdown.
    static let drainTimeout: UInt64 = 1_000_000_000

    init(
        listenFD: Int32, isTCP: Bool, store: FlagStore, token: [UInt8]?, allowedOrigins: [String], limits: OFREPLimits,
        logger: Logger, metrics: DaemonMetrics
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
        self.responder = OFREPResponder(token: isTCP ? token : nil, allowedOrigins: Set(allowedOrigins))
        self.limits = limits
        self.limiter = OFREPRateLimiter(perSecond: limits.requestRate)
        self.flags = OFREPFlagsCache(store: store, maximumBulkBytes: limits.maxBulkBytes, logger: logger)
        self.logger = logger
        self.metrics = metrics
        if isTCP, let host = InetSocket.localHost(listenFD), let port = InetSocket.localPort(listenFD) {
            streamOrigin = "http://" + (host.contains(":") ? "[\(host)]" : host) + ":" + String(port)
        } else {
            streamOrigin = nil
        }
        streams = OFREPEventStreams(etag: "", wallSeconds: Self.wallSeconds())
        bell = OFREPChangeBell(wake)
        let initial = advertisedFlags(now: Self.now()).bulkETag?.quoted ?? ""
        _ = streams.record(etag: initial, wallSeconds: Self.wallSeconds())
        _ = store.observe { [bell] _ in bell.ring() }
    }

    deinit {
        bell.silence()
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
            publishChanges(now: now)
            for connection in Array(connections.values) where now >= connection.deadline {
                if connection.isStream {
                    beat(connection, now: now)
                } else {
                    expire(connection)
                }
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
            // A full listener makes room by closing the oldest connection that has not shown the token, so
            // clients without it can never crowd out those with it.
            if connections.count >= limits.maxConnections,
                let unproven = connections.values.filter({ !$0.isAuthenticated }).min(by: { $0.sequence < $1.sequence })
            {
                closeConnection(unproven, drainingInput: true)
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
            acceptedCount += 1
            let connection = OFREPConnection(
                fd: fd, peer: peer,
                parser: HTTPRequestParser(maximumHeadBytes: limits.maxHeadBytes, maximumBodyBytes: limits.maxBodyBytes),
                deadline: Self.now() + limits.idleTimeout, isAuthenticated: responder.token == nil,
                sequence: acceptedCount)
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
            // A stream's client sends nothing after its request: anything more, or its hang-up, ends it.
            if connection.isStream {
                closeConnection(connection)
                return
            }
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
            case .request(let request) where request.path == OFREPEventStreams.path && !responder.isPreflight(request):
                openStream(connection, request)
                return
            case .request(let request):
                let response = responder.respond(
                    to: request, flags: { advertisedFlags(now: Self.now()) },
                    admit: { limiter.admit(connection.peer, now: Double(Self.now()) / 1e9) })
                metrics.ofrepAnswered(endpoint: OFREPResponder.endpoint(of: request.path), status: response.status)
                // A request without the token ends its connection: it holds no slot and earns no more time. A
                // preflight needs no token, so it proves nothing: its connection stays displaceable.
                let refused = response.status == 401
                if !refused, !responder.isPreflight(request) { connection.isAuthenticated = true }
                let closing = refused || !request.keepsAlive || endOfInput || stopRequested.withLock { $0 }
                connection.enqueue(response, closing: closing)
                connection.deadline = Self.now() + limits.idleTimeout
                if closing {
                    connection.closesAfterFlush = true
                    return
                }
            }
        }
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
        if !connection.isStream, connection.parser.bufferedCount > 0 {
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
        if connection.isStream { streamCount -= 1 }
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

    // MARK: Event streams

    /// The flags with the bulk answer advertising the current channel's stream; rebuilt when the flags' bulk
    /// answer or the channel changes.
    private func advertisedFlags(now: UInt64) -> OFREPFlags {
        let current = flags.current()
        let channel = streams.advertisedChannel(now: now)
        guard let source = current.bulkETag else { return current }
        if let advertised, advertised.source == source, advertised.channel == channel { return advertised.flags }
        let built = current.advertising(OFREPEventStreams.advert(channel: channel, origin: streamOrigin))
        advertised = (source, channel, built)
        return built
    }

    /// Announces a new bulk answer to every stream.
    private func publishChanges(now: UInt64) {
        guard let tag = advertisedFlags(now: now).bulkETag,
            let event = streams.record(etag: tag.quoted, wallSeconds: Self.wallSeconds())
        else { return }
        for connection in Array(connections.values) where connection.isStream { push(event, to: connection) }
    }

    /// Answers a request for `OFREPEventStreams.path`: the stream, or a refusal that ends the connection. The
    /// channel in the query stands for the token; the request target is never logged, since it holds it.
    private func openStream(_ connection: OFREPConnection, _ request: HTTPRequest) {
        let now = Self.now()
        var refusal: HTTPResponse?
        if request.method != "GET" {
            refusal = OFREPResponder.error(405, details: "event streams are GET requests", headers: [("Allow", "GET")])
        } else if !(OFREPEventStreams.channel(inQuery: request.query).map { streams.accepts($0, now: now) } ?? false) {
            refusal = OFREPResponder.error(
                404, details: "no such event stream; take its URL from a bulk answer's eventStreams")
        } else if let seconds = limiter.admit(connection.peer, now: Double(now) / 1e9) {
            refusal = OFREPResponder.error(
                429, details: "too many requests; retry after \(seconds) s", headers: [("Retry-After", String(seconds))]
            )
        } else if streamCount >= limits.maxStreams {
            refusal = OFREPResponder.error(503, details: "too many event streams", headers: [("Retry-After", "5")])
        }
        if var refusal {
            responder.withCORS(&refusal, for: request)
            connection.enqueue(refusal, closing: true)
            connection.closesAfterFlush = true
            return
        }
        var fields = HTTPResponse(status: 200)
        responder.withCORS(&fields, for: request)
        connection.enqueue(OFREPEventStreams.head(extraHeaders: fields.headers))
        connection.enqueue(streams.opening(lastEventID: request.header("last-event-id")))
        // Events are small and each names the latest state: a small kernel buffer bounds what a stalled reader
        // holds, and lets the cut below find it soon.
        var sendBuffer = Int32(limits.maxStreamPendingBytes)
        _ = setsockopt(connection.fd, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
        connection.isStream = true
        connection.isAuthenticated = true
        streamCount += 1
        connection.streamEnds = now &+ limits.streamMaxAge
        connection.deadline = min(now &+ limits.streamHeartbeat, connection.streamEnds)
    }

    /// A stream's deadline: a heartbeat, or its end once it reached its maximum age.
    private func beat(_ connection: OFREPConnection, now: UInt64) {
        guard now < connection.streamEnds else {
            closeConnection(connection, drainingInput: true)
            return
        }
        connection.deadline = min(now &+ limits.streamHeartbeat, connection.streamEnds)
        push(OFREPEventStreams.heartbeat, to: connection)
    }

    /// Queues `bytes` on a stream and sends; a reader `maxStreamPendingBytes` behind is cut off.
    private func push(_ bytes: [UInt8], to connection: OFREPConnection) {
        connection.enqueue(bytes)
        guard connection.pendingCount <= limits.maxStreamPendingBytes else {
            logger.debug("OFREP: an event stream's reader fell behind; closed", ["PEER": connection.peer])
            closeConnection(connection)
            return
        }
        flush(connection)
    }

    // MARK: Time

    private func nextTimeout() -> Int32 {
        var earliest = acceptPausedUntil ?? UInt64.max
        if streamCount > 0, let rotation = streams.nextRotation { earliest = min(earliest, rotation) }
        for connection in connections.values { earliest = min(earliest, connection.deadline) }
        guard earliest != UInt64.max else { return -1 }
        let now = Self.now()
        guard earliest > now else { return 0 }
        return Int32(min(UInt64(Int32.max), (earliest - now + 999_999) / 1_000_000))
    }

    static func now() -> UInt64 { MonotonicClock.nanoseconds() }

    static func wallSeconds() -> Int { time(nil) }
}

/// Rings the loop's eventfd when the store changes, until the loop has closed it.
final class OFREPChangeBell: Sendable {
    private let wake: Locked<EventFD?>

    init(_ wake: EventFD) { self.wake = Locked(wake) }

    func ring() { wake.withLock { $0?.ring() } }

    func silence() { wake.withLock { $0 = nil } }
}
