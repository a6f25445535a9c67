/// What the policy is configured with: the `[FeatureFlags]` durations as seconds on the boot clock.
extension RefreshPolicy {
    /// The configured durations (docs/configuration.md) in seconds, and the lifecycle.
    public struct Settings: Sendable, Equatable {
        public var cacheMaxAge: Double
        public var refreshInterval: Double
        public var sessionTimeout: Double
        public var sessionMaxAge: Double
        public var refreshThrottle: Double
        public var disableThrottle: Bool
        public var lifecycle: Lifecycle
        public var retryBackoff: Double
        /// The width of the slot grid interval refreshes land on (F1); at most `refreshInterval`, 0 for none.
        public var refreshSpread: Double
        /// The longest a session start with usable flags waits for its request (F2); 0 sends it at once.
        public var sessionStartDelay: Double
        /// The least time between the previous request and one a caller prompts (not a configuration key).
        public var callerSpacing = RefreshPolicy.callerSpacing

        public init(_ configuration: Configuration) {
            cacheMaxAge = configuration.cacheMaxAge.seconds
            refreshInterval = configuration.refreshInterval.seconds
            sessionTimeout = configuration.sessionTimeout.seconds
            sessionMaxAge = configuration.sessionMaxAge.seconds
            refreshThrottle = configuration.refreshThrottle.seconds
            disableThrottle = configuration.disableThrottle
            lifecycle = configuration.lifecycle
            retryBackoff = configuration.retryBackoff.seconds
            refreshSpread = configuration.refreshSpread.seconds
            sessionStartDelay = configuration.sessionStartDelay.seconds
        }

        /// The slot grid's width as applied: never wider than `refreshInterval`.
        public var effectiveSpread: Double { max(0, min(refreshSpread, refreshInterval)) }
    }
}
