import FlagsCore
import FlagsProtocol
import PushwooshAPI

/// Flags from `LocalFlagsFile` (`LocalFlagSource`): read at start, on every change of the file and on
/// `refresh`. The file is its own cache, so its flags never expire, and impressions go to the log.
final class LocalFileProvider: FlagProvider {
    let mark = FlagSource.file
    let diskCache: FlagCache? = nil
    let problem: String? = nil
    let impressionSink: (any FlagFetcher)? = nil
    let file: LocalFlagSource

    init(file: LocalFlagSource) {
        self.file = file
    }

    func identity(userId: String) -> String { mark.rawValue }

    func settings(_ configuration: Configuration) -> RefreshPolicy.Settings {
        var settings = RefreshPolicy.Settings(configuration)
        settings.cacheMaxAge = .infinity
        return settings
    }

    // MARK: Serving

    func start(_ refresher: Refresher) async {
        file.start()
        await refresher.start()
    }

    func run() async {
        await file.run()
    }

    func update(configuration: Configuration) {}

    func retire() {
        file.retire()
    }

    func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError> {
        switch file.load() {
        case .success: .success(FeatureFlagsResponse(flags: file.currentFlags, partial: false))
        case .failure(let error): .failure(.notSent(error.reason))
        }
    }

    /// Never: the file is its own cache.
    func expiry(fetchedAt: Double?, maxAge: Double, clock: any DaemonClock) -> FlagExpiry { .never }

    /// The read already served what it returned, under the file's read lock: serving it again after the await
    /// could put an older read back over a newer one.
    func fetched(_ response: FeatureFlagsResponse, expiry: FlagExpiry) {}

    func serve(_ flags: FlagSet, expiry: FlagExpiry) {
        file.serve(flags)
    }

    /// The file's flags never expire: there is nothing to move.
    func restamp(_ expiry: FlagExpiry) {}

    /// The file serves every user the same flags.
    func userChanged() {}

    /// The file is read for this caller, now, outside the refresh policy: sharing a read that began before the
    /// caller's request could answer with what the file held before the caller changed it.
    func refresh(_ refresher: Refresher) async -> Result<Bool, PushwooshError> {
        await fetch(userId: "").map { _ in false }
    }

    /// Nothing to fetch on a push registration: the file's changes are seen as they happen.
    func pushRegistered(_ refresher: Refresher) async -> Bool { false }

    // MARK: Reporting

    /// Edits of the file arrive through inotify, not through the refresher: the read time is the file's own, and
    /// no refresh is due.
    func fill(_ status: inout StatusResult, refresher: RefresherStatus) {
        status.source = mark.rawValue
        status.applicationCode = nil
        status.fetchedAt = file.loadedAt.map { RefresherStatus.timestamp($0.timeIntervalSince1970) }
        status.nextRefreshAt = nil
        status.problem = file.problem
    }

    func ageSeconds(refresher: RefresherStatus, clock: any DaemonClock) -> Double? {
        file.loadedAt.map { max(0, clock.wallNow() - $0.timeIntervalSince1970) }
    }

    func statusLine(flags count: Int, refresher: RefresherStatus, clock: any DaemonClock) -> String {
        if let problem = file.problem { return "Local file: \(count) flags; \(problem)" }
        return "Local file: \(count) flags from \(file.path ?? "-")"
    }
}
