public import FlagsCore

/// The bounds on what OFREP clients may make the listener hold (README, Configuration, [OFREP]).
public struct OFREPLimits: Sendable, Equatable {
    public var maxConnections: Int
    /// Nanoseconds a connection has to send a whole request after its previous answer (or its start).
    public var idleTimeout: UInt64
    /// Requests a second per client; 0: no limit.
    public var requestRate: Int
    /// The request line and header fields together, in bytes.
    public var maxHeadBytes: Int
    /// A request body, in bytes; an evaluation context is far smaller.
    public var maxBodyBytes: Int
    /// Answers queued for one connection before the listener stops reading its next requests.
    public var maxPendingBytes: Int
    /// The largest bulk answer; past it a bulk request gets 500 and clients evaluate flags one at a time.
    public var maxBulkBytes: Int

    public init(
        maxConnections: Int = 64, idleTimeout: Duration = .seconds(30), requestRate: Int = 500,
        maxHeadBytes: Int = 8192, maxBodyBytes: Int = 65536, maxPendingBytes: Int = 262_144,
        maxBulkBytes: Int = 16 << 20
    ) {
        self.maxConnections = maxConnections
        // Saturating: no duration, however long, traps here (the parser already refuses more than 10 years).
        let (seconds, attoseconds) = idleTimeout.components
        let (whole, overflow) = UInt64(max(0, seconds)).multipliedReportingOverflow(by: 1_000_000_000)
        self.idleTimeout =
            overflow ? UInt64.max / 2 : min(UInt64.max / 2, whole + UInt64(max(0, attoseconds) / 1_000_000_000))
        self.requestRate = requestRate
        self.maxHeadBytes = maxHeadBytes
        self.maxBodyBytes = maxBodyBytes
        self.maxPendingBytes = maxPendingBytes
        self.maxBulkBytes = maxBulkBytes
    }

    public init(_ configuration: Configuration) {
        self.init(
            maxConnections: configuration.ofrepConnectionLimit, idleTimeout: configuration.ofrepIdleTimeout,
            requestRate: configuration.ofrepRequestRate)
    }
}
