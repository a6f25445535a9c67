import FlagsCore

/// The bounds on what OFREP clients may make the listener hold (docs/configuration.md, [OFREP]).
struct OFREPLimits: Sendable, Equatable {
    var maxConnections: Int
    /// Nanoseconds a connection has to send a whole request after its previous answer (or its start).
    var idleTimeout: UInt64
    /// Requests a second per client; 0: no limit.
    var requestRate: Int
    /// The request line and header fields together, in bytes.
    var maxHeadBytes: Int
    /// A request body, in bytes; an evaluation context is far smaller.
    var maxBodyBytes: Int
    /// Answers queued for one connection before the listener stops reading its next requests.
    var maxPendingBytes: Int
    /// The largest bulk answer; past it a bulk request gets 500 and clients evaluate flags one at a time.
    var maxBulkBytes: Int
    /// Event streams open at once (half the connections, at least one), so streams never crowd out requests.
    var maxStreams: Int
    /// Nanoseconds between a stream's heartbeats: half the idle timeout, at most 15 s.
    var streamHeartbeat: UInt64
    /// Nanoseconds a stream lives before it is closed and the client reconnects (resuming by `Last-Event-ID`).
    var streamMaxAge: UInt64
    /// Unsent bytes a stream may hold (also its socket's send buffer); a reader that falls this far behind is cut
    /// off. It loses nothing: it reconnects with `Last-Event-ID` and gets the latest change.
    var maxStreamPendingBytes: Int

    init(
        maxConnections: Int = 64, idleTimeout: Duration = .seconds(30), requestRate: Int = 500,
        maxHeadBytes: Int = 8192, maxBodyBytes: Int = 65536, maxPendingBytes: Int = 262_144,
        maxBulkBytes: Int = 16 << 20
    ) {
        self.maxConnections = maxConnections
        // Saturating: no duration, however long, traps here (the parser already refuses more than 10 years).
        self.idleTimeout = EngineClock.nanoseconds(idleTimeout)
        self.requestRate = requestRate
        self.maxHeadBytes = maxHeadBytes
        self.maxBodyBytes = maxBodyBytes
        self.maxPendingBytes = maxPendingBytes
        self.maxBulkBytes = maxBulkBytes
        self.maxStreams = max(1, maxConnections / 2)
        self.streamHeartbeat = max(100_000_000, min(15_000_000_000, self.idleTimeout / 2))
        self.streamMaxAge = 3600 * 1_000_000_000
        self.maxStreamPendingBytes = 8192
    }

    init(_ configuration: Configuration) {
        self.init(
            maxConnections: configuration.ofrepConnectionLimit, idleTimeout: configuration.ofrepIdleTimeout,
            requestRate: configuration.ofrepRequestRate)
    }
}
