public import FlagsCore

/// OFREP event streams (ADR-0008): the channels that stand for the token in a stream's URL, and the
/// `refetchEvaluation` events a change of the bulk answer makes.
///
/// A browser's `EventSource` cannot send `Authorization`, so the stream URL carries its own credential: a random
/// channel id (128 bits) that only an authenticated bulk answer hands out. A channel is advertised for `lifetime`,
/// then replaced (which changes the bulk answer, so open streams are told to re-fetch and learn the new URL), and
/// accepted for new streams for twice `lifetime`. Channels live in memory: a restart, the only way the token
/// changes, revokes every one.
///
/// Events are notifications only: each says that the bulk answer's `ETag` is now `etag`. The latest one is kept,
/// so a client resuming with any other `Last-Event-ID` gets it at once and misses no change.
///
/// Pure: time (monotonic nanoseconds) and randomness come in.
public struct OFREPEventStreams: Sendable {
    /// One `refetchEvaluation` event: its SSE id, the bulk answer's entity tag and when it changed (Unix seconds).
    public struct Event: Sendable, Equatable {
        public var id: String
        public var etag: String
        public var lastModified: Int
    }

    struct Channel: Sendable {
        var id: String
        var issuedAt: UInt64
    }

    /// The path streams are served under; the channel is the `channel` query parameter.
    public static let path = "/ofrep/v1/events"
    /// A comment line: keeps proxies and idle timers from closing a quiet stream, and finds dead peers.
    public static let heartbeat = Array(": heartbeat\n\n".utf8)
    /// How long a channel is advertised, by default (1 hour).
    public static let defaultLifetime: UInt64 = 3600 * 1_000_000_000

    public let lifetime: UInt64
    private let newID: @Sendable () -> String
    /// Newest last; at most two (the advertised one and the one it replaced).
    private var channels: [Channel] = []
    /// The event ids' prefix, 8 hex digits drawn at start (not the line protocol's epoch): distinguishes this
    /// process's event ids from a previous one's, so a `Last-Event-ID` from before a restart
    /// is never taken for a current one.
    private let runID: String
    private var sequence: UInt64 = 0
    /// The latest event: the current bulk answer's tag. The first one describes the state at start and is never
    /// sent unless a client resumes from another id.
    public private(set) var latest: Event

    public init(
        lifetime: UInt64 = OFREPEventStreams.defaultLifetime, etag: String, wallSeconds: Int,
        newID: @escaping @Sendable () -> String = OFREPEventStreams.randomID
    ) {
        self.lifetime = max(1, lifetime)
        self.newID = newID
        runID = String(newID().prefix(8))
        latest = Event(id: runID + "-0", etag: etag, lastModified: wallSeconds)
    }

    /// 128 random bits in hex, from the system's generator (getrandom).
    public static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        let words = [generator.next(), generator.next()] as [UInt64]
        return words.map { word in
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
    }

    // MARK: Channels

    /// The channel to advertise at `now`, issuing a new one when the current one has been advertised for
    /// `lifetime`; channels past twice `lifetime` are forgotten.
    public mutating func advertisedChannel(now: UInt64) -> String {
        channels.removeAll { now >= $0.issuedAt &+ 2 &* lifetime }
        if let newest = channels.last, now < newest.issuedAt &+ lifetime { return newest.id }
        channels.append(Channel(id: newID(), issuedAt: now))
        if channels.count > 2 { channels.removeFirst(channels.count - 2) }
        return channels[channels.count - 1].id
    }

    /// When the advertised channel is replaced (monotonic nanoseconds), or nil before one is issued.
    public var nextRotation: UInt64? { channels.last.map { $0.issuedAt &+ lifetime } }

    /// True when `candidate` names a channel issued less than twice `lifetime` before `now`; compared in time
    /// that does not depend on where it differs.
    public func accepts(_ candidate: String, now: UInt64) -> Bool {
        var found = false
        for channel in channels where now < channel.issuedAt &+ 2 &* lifetime {
            if OFREPResponder.constantTimeEqual(Array(candidate.utf8), Array(channel.id.utf8)) { found = true }
        }
        return found
    }

    /// The `channel` parameter of a query string, or nil.
    public static func channel(inQuery query: String?) -> String? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") where pair.hasPrefix("channel=") {
            return String(pair.dropFirst("channel=".count))
        }
        return nil
    }

    /// The request target of a channel's stream.
    public static func requestURI(channel: String) -> String { path + "?channel=" + channel }

    /// The `eventStreams` member for a channel: `url` when the listener's origin is known (loopback TCP, such as
    /// `http://127.0.0.1:8016`), else `endpoint.requestUri`, which a provider joins to its OFREP base URL.
    public static func advert(channel: String, origin: String?) -> JSONValue {
        var entry: [String: JSONValue] = ["type": "sse"]
        if let origin {
            entry["url"] = .string(origin + requestURI(channel: channel))
        } else {
            entry["endpoint"] = .object(["requestUri": .string(requestURI(channel: channel))])
        }
        return .array([.object(entry)])
    }

    // MARK: Events

    /// Records that the bulk answer's tag is now `etag`; the event's bytes, or nil when the tag is unchanged.
    public mutating func record(etag: String, wallSeconds: Int) -> [UInt8]? {
        guard etag != latest.etag else { return nil }
        sequence += 1
        latest = Event(id: runID + "-" + String(sequence), etag: etag, lastModified: wallSeconds)
        return Self.bytes(of: latest)
    }

    /// What a new stream sends first: the reconnection delay, then the latest event when the client resumes
    /// from any other id (it missed at least that change); nothing more for a fresh stream.
    public func opening(lastEventID: String?) -> [UInt8] {
        var bytes = Array("retry: 1000\n\n".utf8)
        if let lastEventID, lastEventID != latest.id { bytes += Self.bytes(of: latest) }
        return bytes
    }

    /// One event on the wire: `id`, `event: message` and the JSON `data` ADR-0008 defines.
    public static func bytes(of event: Event) -> [UInt8] {
        var data: [UInt8] = []
        JSONValue.object([
            "type": "refetchEvaluation", "etag": .string(event.etag),
            "lastModified": .number(Double(event.lastModified)),
        ]).write(to: &data)
        return Array("id: \(event.id)\nevent: message\ndata: ".utf8) + data + Array("\n\n".utf8)
    }

    /// The head of a stream's answer: no `Content-Length`, the stream ends when the connection does.
    public static func head(extraHeaders: [(name: String, value: String)]) -> [UInt8] {
        var text = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
        for (name, value) in extraHeaders { text += "\(name): \(value)\r\n" }
        return Array((text + "\r\n").utf8)
    }
}

extension OFREPFlags {
    /// The same flags with `eventStreams` as the bulk answer's first member, and the tag of that body; unchanged
    /// when the bulk answer is over its bound.
    public func advertising(_ eventStreams: JSONValue) -> OFREPFlags {
        guard case .body(let body, _) = bulk, body.first == UInt8(ascii: "{") else { return self }
        var advertised = Array(#"{"eventStreams":"#.utf8)
        eventStreams.write(to: &advertised)
        if body.count > 2 { advertised.append(UInt8(ascii: ",")) }
        advertised += body.dropFirst()
        return OFREPFlags(flags: flags, bulk: .body(advertised, EntityTag(digestOf: advertised)))
    }
}
