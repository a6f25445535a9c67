import FlagsCore

/// The bounds on what clients may make the server hold (docs/configuration.md, [Daemon]).
struct ServerLimits: Sendable, Equatable {
    var maxConnections: Int
    var maxLineBytes: Int
    var maxPendingBytes: Int
    var maxSubscriptions: Int
    /// Listen keys per connection, in `ListenBounds` units.
    var maxListenKeys: Int
    /// Nanoseconds a connection with no subscription and nothing asked or owed may stay open.
    var idleTimeout: UInt64

    init(
        maxConnections: Int = 256, maxLineBytes: Int = 65536, maxPendingBytes: Int = 4_194_304,
        maxSubscriptions: Int = 64, maxListenKeys: Int = 1024, idleTimeout: Duration = .seconds(300)
    ) {
        self.idleTimeout = EngineClock.nanoseconds(idleTimeout)
        self.maxConnections = maxConnections
        self.maxLineBytes = maxLineBytes
        self.maxPendingBytes = maxPendingBytes
        self.maxSubscriptions = maxSubscriptions
        self.maxListenKeys = maxListenKeys
    }

    init(_ configuration: Configuration) {
        self.init(
            maxConnections: configuration.maxConnections,
            maxLineBytes: configuration.maxLineBytes,
            maxPendingBytes: configuration.maxPendingBytes,
            maxSubscriptions: configuration.maxSubscriptions,
            maxListenKeys: configuration.maxListenKeys,
            idleTimeout: configuration.idleConnectionTimeout
        )
    }
}
