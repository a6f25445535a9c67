import FlagsCore
import FlagsProtocol
import PushwooshAPI

/// Where flags come from: the local flags file (`LocalFileProvider`) or Pushwoosh (`PushwooshProvider`).
///
/// A provider fetches and describes itself, and holds nothing of what it fetched: the refresher decides when to
/// ask, and `FlagFeed` what the answer does (the store, the disk cache, the expiry, the status). What is here is
/// what really differs between the two; nothing asks which one it is.
protocol FlagProvider: Sendable {
    /// The name `status.source` gives it, and the mark on every flag it serves (`explain`'s `source`).
    var mark: FlagSource { get }
    /// The Pushwoosh application whose flags it fetches; nil for a source that serves every user the same.
    var applicationCode: String? { get }
    /// Why no request can ever be sent (R16, no application code), or nil.
    var problem: String? { get }
    /// Where complete responses are kept across restarts (R7); nil when the source is its own cache.
    var diskCache: FlagCache? { get }
    /// Where impressions are sent (R17); nil when the source logs them instead.
    var impressionSink: (any FlagFetcher)? { get }
    /// True when the source puts its own reads in the store as they happen (the local file and its watch): it is
    /// its own cache (its flags never expire), a caller's `refresh` reads it at once outside the refresh policy,
    /// and a push registration has nothing to fetch.
    var servesItself: Bool { get }

    /// Serves what the source serves by itself, before the refresher starts; replaces whatever the previous
    /// source served, so that a reload serves what a restart would.
    func start()
    /// Watches the source until cancelled; returns at once when there is nothing to watch.
    func run() async
    /// A reload that keeps the source: the request timeout, `CacheMaxAge`.
    func update(configuration: Configuration)
    /// A reload replaced the source, or the daemon stops: from now on it sends nothing and serves nothing.
    func retire()
    /// Fetches the flags of `userId`.
    func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError>

    /// Fills in the `status` members the source owns, over those the refresher filled in from `refresher`.
    func fill(_ status: inout StatusResult, refresher: RefresherStatus)
    /// Seconds since the flags served were fetched or read; nil when there are none.
    func ageSeconds(refresher: RefresherStatus, clock: any DaemonClock) -> Double?
    /// The line `systemctl status` shows, with `flags` served.
    func statusLine(flags: Int, refresher: RefresherStatus, clock: any DaemonClock) -> String
}

extension FlagProvider {
    /// What stored flags are valid for (R7): the source, and for Pushwoosh the application code and the user.
    func identity(userId: String) -> String {
        guard let applicationCode else { return mark.rawValue }
        return "\(mark.rawValue) \(applicationCode) \(userId)"
    }
}
