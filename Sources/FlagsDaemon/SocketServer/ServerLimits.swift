import FlagsCore

/// The bounds on what clients may make the server hold (docs/configuration.md, [Daemon]).
struct ServerLimits: Sendable, Equatable {
    var maxConnections: Int
    var maxLineBytes: Int
    var maxPendingBytes: Int
    var maxSubscriptions: Int
    /// Listen keys per connection, in `ListenKeyCost` units.
    var maxListenKeys: Int

    init(
        maxConnections: Int = 256, maxLineBytes: Int = 65536, maxPendingBytes: Int = 4_194_304,
        maxSubscriptions: Int = 64, maxListenKeys: Int = 1024
    ) {
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
            maxListenKeys: configuration.maxListenKeys
        )
    }
}
