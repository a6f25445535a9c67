import FlagsCore
import FlagsProtocol
import PushwooshAPI

/// Where flags come from: the local flags file (`LocalFileProvider`) or Pushwoosh (`PushwooshProvider`).
///
/// A provider answers and describes itself, and holds nothing of what it answered: the refresher decides when to
/// ask, and `FlagFeed`, the one writer of source flags, what an answer does (the store, the disk cache, the
/// expiry, the status). What is here is what really differs between the two.
protocol FlagProvider: Sendable {
    /// The name `status.source` gives it, and the mark on every flag it serves (`explain`'s `source`).
    var mark: FlagSource { get }
    /// How its flags are kept: watched and read as they change (the file), or fetched by the refresh policy.
    var upkeep: SourceUpkeep { get }
    /// The flags of `userId`: a read of the file, a request to Pushwoosh.
    func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError>

    /// Fills in the `status` members the source owns, over those the refresher filled in from `refresher`.
    func fill(_ status: inout StatusResult, refresher: RefresherStatus)
    /// Seconds since the flags served were fetched or read; nil when there are none.
    func ageSeconds(refresher: RefresherStatus, clock: any DaemonClock) -> Double?
    /// The line `systemctl status` shows, with `flags` served.
    func statusLine(flags: Int, refresher: RefresherStatus, clock: any DaemonClock) -> String
}

/// How a source's flags are kept fresh, with what comes with each way.
enum SourceUpkeep: Sendable {
    /// Read at start, on every change `watch` reports and at once on every `refresh`, outside the refresh policy
    /// (the local file). Its flags never expire and serve every user the same; impressions go to the log.
    case watched(any FlagWatch)
    /// Fetched when the refresh policy says (R7-R16), kept in a disk cache, served until `CacheMaxAge`.
    case fetched(Upstream)
}

/// A source that reports its own changes.
protocol FlagWatch: Sendable {
    /// Where the flags are read from, for the log.
    var location: String { get }
    /// Calls `changed` after each change of the source, one at a time, until cancelled. Returns at once when the
    /// source cannot be watched, which it says in the log: it is then read on `refresh` and the policy's triggers.
    func run(changed: @escaping @Sendable () async -> Void) async
}

/// What a fetched source brings: the application, the disk cache, the seed and the sender of requests.
struct Upstream: Sendable {
    /// The Pushwoosh application whose flags it fetches.
    let applicationCode: String
    /// Where complete responses are kept across restarts (R7).
    let diskCache: FlagCache
    /// The flags the device image ships (`SeedFile`), served while no usable flags of its own are; nil for none.
    let seed: SeedFile.Loaded?
    /// Sends the requests, impressions included (R17).
    let fetcher: any FlagFetcher
}

extension FlagProvider {
    /// The fetched source's parts; nil for a watched one.
    var upstream: Upstream? {
        guard case .fetched(let upstream) = upkeep else { return nil }
        return upstream
    }

    /// True for a source read as it changes: its flags never expire and serve every user the same.
    var isWatched: Bool { upstream == nil }

    /// The Pushwoosh application whose flags it fetches; nil for a source that serves every user the same.
    var applicationCode: String? { upstream?.applicationCode }

    /// Why no request can ever be sent (R16, no application code), or nil.
    var problem: String? { upstream?.fetcher.problem }

    /// Where impressions are sent (R17); nil when the source logs them instead.
    var impressionSink: (any FlagFetcher)? { upstream?.fetcher }

    /// What stored flags are valid for (R7): the source, and for Pushwoosh the application code and the user.
    func identity(userId: String) -> String {
        guard let applicationCode else { return mark.rawValue }
        return "\(mark.rawValue) \(applicationCode) \(userId)"
    }
}
