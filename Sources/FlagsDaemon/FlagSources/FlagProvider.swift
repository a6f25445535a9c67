import FlagsCore
import FlagsProtocol
import PushwooshAPI

/// Where flags come from: the local flags file (`LocalFileProvider`) or Pushwoosh (`PushwooshProvider`).
///
/// Each implementation owns what differs between the two: how it starts serving, its one path into the flag
/// store, its expiry, the age of its flags, its `status` members and its status line. The refresher's timers,
/// the source stack, `status` and `explain` ask the source what it does; none asks which one it is.
protocol FlagProvider: Sendable {
    /// The name `status.source` gives it, and the mark on every flag it serves (`explain`'s `source`).
    var mark: FlagSource { get }
    /// Why no request can ever be sent (R16, no application code), or nil.
    var problem: String? { get }
    /// Where complete responses are kept across restarts (R7); nil when the source is its own cache.
    var diskCache: FlagCache? { get }
    /// Where impressions are sent (R17); nil when the source logs them instead.
    var impressionSink: (any FlagFetcher)? { get }

    /// What stored flags are valid for (R7): the source, and for Pushwoosh the application code and the user.
    func identity(userId: String) -> String
    /// The refresh policy's settings for `configuration`, as this source applies them.
    func settings(_ configuration: Configuration) -> RefreshPolicy.Settings

    /// Serves what can be served without the network, and starts `refresher`; replaces whatever the previous
    /// source served, so that a reload serves what a restart would.
    func start(_ refresher: Refresher) async
    /// Watches the source until cancelled; returns at once when there is nothing to watch.
    func run() async
    /// A reload that keeps the source: the request timeout, `CacheMaxAge`.
    func update(configuration: Configuration)
    /// A reload replaced the source, or the daemon stops: from now on it sends nothing and serves nothing.
    func retire()

    /// Fetches the flags of `userId`.
    func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError>
    /// When flags fetched at `fetchedAt` (boot clock; nil: none) stop being served, `maxAge` being `CacheMaxAge`.
    func expiry(fetchedAt: Double?, maxAge: Double, clock: any DaemonClock) -> FlagExpiry
    /// Takes what `fetch` returned, to be served until `expiry`.
    func fetched(_ response: FeatureFlagsResponse, expiry: FlagExpiry)
    /// Makes `flags` what the store serves until `expiry`: the source's one path into the store.
    func serve(_ flags: FlagSet, expiry: FlagExpiry)
    /// The expiry of the flags served moved without a change of flags (a reload changed `CacheMaxAge`).
    func restamp(_ expiry: FlagExpiry)
    /// The user id changed (R8d): flags that belong to the previous user are no longer served.
    func userChanged()

    /// A caller's `refresh`: returns whether the answer came from the network.
    func refresh(_ refresher: Refresher) async -> Result<Bool, PushwooshError>
    /// A caller's `pushRegistered` (R8c): returns whether a refresh was started.
    func pushRegistered(_ refresher: Refresher) async -> Bool

    /// Fills in the `status` members the source owns, over those the refresher filled in from `refresher`.
    func fill(_ status: inout StatusResult, refresher: RefresherStatus)
    /// Seconds since the flags served were fetched or read; nil when there are none.
    func ageSeconds(refresher: RefresherStatus, clock: any DaemonClock) -> Double?
    /// The line `systemctl status` shows, with `flags` served.
    func statusLine(flags: Int, refresher: RefresherStatus, clock: any DaemonClock) -> String
}
