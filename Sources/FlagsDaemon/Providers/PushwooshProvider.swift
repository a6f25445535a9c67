import FlagsCore
import FlagsProtocol
import PushwooshAPI
import UnixIO

/// Flags from Pushwoosh, fetched when the refresher asks (R7-R16); the feed keeps complete responses in the disk
/// cache this names, and stops serving them at `CacheMaxAge` (R15).
final class PushwooshProvider: FlagProvider {
    let mark = FlagSource.pushwoosh
    /// The application, the disk cache, the seed and the sender: kept once, as the upkeep hands them out.
    private let parts: Upstream

    init(fetcher: any FlagFetcher, applicationCode: String, diskCache: FlagCache, seed: SeedFile.Loaded? = nil) {
        parts = Upstream(applicationCode: applicationCode, diskCache: diskCache, seed: seed, fetcher: fetcher)
    }

    var upkeep: SourceUpkeep { .fetched(parts) }

    func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError> {
        await parts.fetcher.fetch(userId: userId)
    }

    // MARK: Reporting

    func fill(_ status: inout StatusResult, refresher: RefresherStatus) {
        status.source = mark.rawValue
        status.applicationCode = parts.applicationCode
        status.seed = parts.seed.map {
            StatusResult.Seed(
                file: $0.file, exportedAt: $0.seed.exportedAt, flags: $0.seed.flags.count,
                serving: refresher.servingSeed)
        }
    }

    func ageSeconds(refresher: RefresherStatus, clock: any DaemonClock) -> Double? {
        refresher.fetchedAt.map { max(0, clock.bootNow() - $0) }
    }

    func statusLine(flags count: Int, refresher status: RefresherStatus, clock: any DaemonClock) -> String {
        var line = "Pushwoosh \(parts.applicationCode): \(count) flags"
        if status.servingSeed { line += " from the seed" }
        if let problem = status.problem { return line + "; not fetching: \(problem)" }
        if let fetchedAt = status.fetchedAt {
            // A time, not an age: the line changes only when something happens, so nothing wakes to redraw it.
            line += ", fetched at \(clock.wallText(fetchedAt))"
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
