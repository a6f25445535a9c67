import OFREP
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Event streams (ADR-0008): each change the feed brings (and each replacement of the advertised channel) gives a
/// new bulk answer; when its tag differs from the last one announced, every stream gets a `refetchEvaluation`
/// event. Streams are bounded apart: `maxStreams`, a heartbeat that finds dead peers, a maximum age, and a cut
/// for a reader more than `maxStreamPendingBytes` behind.
extension OFREPHandler {
    /// The flags with the bulk answer advertising the current channel's stream; rebuilt when the flags' bulk
    /// answer or the channel changes, and each new bulk answer announced to every stream, whichever asked first
    /// (a change the feed brought, a request, the channel's replacement).
    func advertisedFlags(now: UInt64) -> OFREPFlags {
        let current = flags.current()
        let channel = streams.advertisedChannel(now: now)
        guard let source = current.bulkETag else { return current }
        if let advertised, advertised.source == source, advertised.channel == channel { return advertised.flags }
        let built = current.advertising(OFREPEventStreams.advert(channel: channel, origin: streamOrigin))
        advertised = (source, channel, built)
        // No stream is open while the first answer is built, at start (before the engine is there).
        if let tag = built.bulkETag, let event = streams.record(etag: tag.quoted, wallSeconds: Self.wallSeconds()),
            streamCount > 0
        {
            for connection in Array(engine.connections.values) where connection.isStream {
                push(event, to: connection)
            }
        }
        return built
    }

    /// Answers a request for `OFREPEventStreams.path`: the stream, or a refusal that ends the connection. The
    /// channel in the query stands for the token; the request target is never logged, since it holds it.
    func openStream(_ connection: OFREPConnection, _ request: HTTPRequest) {
        let now = EngineClock.now()
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
    func beat(_ connection: OFREPConnection, now: UInt64) {
        guard now < connection.streamEnds else {
            engine.close(connection, drainingInput: true)
            return
        }
        connection.deadline = min(now &+ limits.streamHeartbeat, connection.streamEnds)
        push(OFREPEventStreams.heartbeat, to: connection)
    }

    /// Queues `bytes` on a stream and sends; a reader `maxStreamPendingBytes` behind is cut off.
    func push(_ bytes: [UInt8], to connection: OFREPConnection) {
        connection.enqueue(bytes)
        guard connection.pendingCount <= limits.maxStreamPendingBytes else {
            logger.debug("OFREP: an event stream's reader fell behind; closed", ["PEER": connection.peer])
            engine.close(connection)
            return
        }
        flush(connection)
    }

    /// The earliest connection deadline or stream rotation, nil for none.
    func nextDeadline() -> UInt64? {
        var earliest = UInt64.max
        if streamCount > 0, let rotation = streams.nextRotation { earliest = min(earliest, rotation) }
        // A waiting 401's turn comes every 1/perSecond s.
        if !refusals.isEmpty { earliest = min(earliest, EngineClock.now() + UInt64(1e9 / DelayedRefusals.perSecond)) }
        var connectionDeadline = UInt64.max
        for connection in engine.connections.values {
            connectionDeadline = min(connectionDeadline, connection.deadline)
        }
        earliestConnectionDeadline = connectionDeadline
        earliest = min(earliest, connectionDeadline)
        return earliest == .max ? nil : earliest
    }
}
