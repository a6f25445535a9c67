import FlagsCore
import FlagsProtocol
import PushwooshAPI
import UnixIO

/// Flags from Pushwoosh: fetched by the refresher (R7-R16), kept in the disk cache, no longer served once they
/// reach `CacheMaxAge` (R15).
final class PushwooshProvider: FlagProvider {
    let mark = FlagSource.pushwoosh
    let applicationCode: String
    let diskCache: FlagCache?
    private let fetcher: any FlagFetcher
    private let store: FlagStore
    private let logger: Logger
    /// Set by `retire()`; the store is written under this lock, so that nothing lands after `retire()` returns.
    private let retired = Locked(false)

    init(
        fetcher: any FlagFetcher, applicationCode: String, store: FlagStore, diskCache: FlagCache, logger: Logger
    ) {
        self.fetcher = fetcher
        self.applicationCode = applicationCode
        self.store = store
        self.diskCache = diskCache
        self.logger = logger
    }

    var problem: String? { fetcher.problem }

    var impressionSink: (any FlagFetcher)? { fetcher }

    func identity(userId: String) -> String { "pushwoosh \(applicationCode) \(userId)" }

    func settings(_ configuration: Configuration) -> RefreshPolicy.Settings { RefreshPolicy.Settings(configuration) }

    // MARK: Serving

    func start(_ refresher: Refresher) async {
        await refresher.start()
        if refresher.status.withLock({ $0.fetchedAt }) == nil {
            // No usable disk cache (or R16: no requests at all): nothing is served until a fetch succeeds.
            serve(FlagSet(), expiry: .never)
        }
    }

    /// Nothing to watch: the refresher's timers ask Pushwoosh.
    func run() async {}

    func update(configuration: Configuration) {
        fetcher.update(configuration: configuration)
    }

    func retire() {
        retired.withLock { $0 = true }
        fetcher.retire()
    }

    func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError> {
        await fetcher.fetch(userId: userId)
    }

    /// `CacheMaxAge` after the fetch (R15).
    func expiry(fetchedAt: Double?, maxAge: Double, clock: any DaemonClock) -> FlagExpiry {
        FlagExpiry(fetchedAt: fetchedAt, maxAge: maxAge, clock: clock)
    }

    func fetched(_ response: FeatureFlagsResponse, expiry: FlagExpiry) {
        guard served(FlagSet(response.flags), expiry: expiry) else { return }
        logger.info(
            "fetched flags", ["FLAG_COUNT": String(response.flags.count), "REVISION": String(store.current.revision)])
    }

    func serve(_ flags: FlagSet, expiry: FlagExpiry) {
        _ = served(flags, expiry: expiry)
    }

    /// Serves `flags` unless retired; returns whether it did.
    private func served(_ flags: FlagSet, expiry: FlagExpiry) -> Bool {
        retired.withLock { retired in
            guard !retired else { return false }
            store.replace(with: flags, from: mark, expiry: expiry)
            return true
        }
    }

    func restamp(_ expiry: FlagExpiry) {
        retired.withLock { retired in
            guard !retired else { return }
            store.restamp(expiry)
        }
    }

    /// Flags are fetched for a user: the previous user's are gone before the new user's arrive.
    func userChanged() {
        serve(FlagSet(), expiry: .never)
    }

    func refresh(_ refresher: Refresher) async -> Result<Bool, PushwooshError> {
        await refresher.refresh()
    }

    func pushRegistered(_ refresher: Refresher) async -> Bool {
        await refresher.pushRegistered()
    }

    // MARK: Reporting

    func fill(_ status: inout StatusResult, refresher: RefresherStatus) {
        status.source = mark.rawValue
        status.applicationCode = applicationCode
    }

    func ageSeconds(refresher: RefresherStatus, clock: any DaemonClock) -> Double? {
        refresher.fetchedAt.map { max(0, clock.bootNow() - $0) }
    }

    func statusLine(flags count: Int, refresher status: RefresherStatus, clock: any DaemonClock) -> String {
        var line = "Pushwoosh \(applicationCode): \(count) flags"
        if let problem = status.problem { return line + "; not fetching: \(problem)" }
        if let fetchedAt = status.fetchedAt {
            // A time, not an age: the line changes only when something happens, so nothing wakes to redraw it.
            line += ", fetched at \(RefresherStatus.wallText(fetchedAt, clock: clock))"
        } else {
            line += ", not fetched yet"
        }
        if let error = status.lastError {
            line += "; offline: last refresh failed with status \(error.status) (\(error.kind.rawValue))"
        }
        if status.cacheError != nil { line += "; cannot write the disk cache" }
        return line
    }
}
