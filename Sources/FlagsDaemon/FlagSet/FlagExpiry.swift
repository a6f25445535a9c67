import FlagsCore

/// When the flags served reach `CacheMaxAge` (R15): `expiresAt` in `status`, `explain`, `listen` and
/// `flagsChanged`, so that a client mirror knows how long it may serve them while the daemon is away.
///
/// The source that serves the flags says it with them, through its one path into the store; the store keeps it
/// and hands it to every update it publishes. The messages therefore always agree, whatever order a source
/// changes its status and its flags in.
enum FlagExpiry: Sendable {
    /// The flags never expire: the local file is its own cache, and without flags (no fetch) or without an age
    /// limit there is nothing to expire.
    case never
    /// At `bootTime` on `clock`'s boot clock; shown as a wall time by that clock as it reads then, so that the
    /// answer is right straight after a wall-clock change.
    case at(bootTime: Double, clock: any DaemonClock)

    /// Flags fetched at `fetchedAt` (boot clock; nil: none) that may be served for `maxAge` seconds.
    init(fetchedAt: Double?, maxAge: Double, clock: any DaemonClock) {
        guard let fetchedAt, maxAge.isFinite else {
            self = .never
            return
        }
        self = .at(bootTime: fetchedAt + maxAge, clock: clock)
    }

    /// An ISO 8601 UTC timestamp, or null when the flags never expire.
    var json: JSONValue {
        guard case .at(let bootTime, let clock) = self else { return .null }
        return .string(clock.wallText(bootTime))
    }
}
