import FlagsCore

/// `expiresAt` as `status`, `listen` and `flagsChanged` report it: when the flags served reach `CacheMaxAge`
/// (R15), so that a client mirror knows how long it may serve them while the daemon is away.
///
/// The one place it is computed, so that the three messages always agree.
enum FlagExpiry {
    /// An ISO 8601 UTC timestamp, or null when the flags never expire: the local file is its own cache, and
    /// without a fetch (no flags) or without an age limit there is nothing to expire. The refresher's boot-clock
    /// fetch time becomes a wall time by `clock` as it reads now.
    static func expiresAt(local: LocalFlagSource?, refresher: RefresherStatus, clock: any DaemonClock) -> JSONValue {
        guard local == nil else { return .null }
        return refresher.expiresAt(maxAge: refresher.cacheMaxAge, clock: clock)
    }
}
