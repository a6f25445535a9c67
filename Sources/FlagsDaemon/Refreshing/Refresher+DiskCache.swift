import FlagsCore
import PushwooshAPI

/// The disk cache's age on two clocks: served at start when it is young enough, judged again when the wall clock
/// is set.
extension Refresher {
    /// The wall clock was set (NTP, an operator) or the machine resumed: intervals are unaffected, since they run
    /// on the boot clock, but the log says by how much the wall clock moved, the disk cache's wall fetch time is
    /// made right for the next start, a provisional cache is judged again, and the loop looks at its deadlines.
    func wallClockChanged() {
        guard !isRetired else { return }
        let boot = clock.bootNow()
        let wall = clock.wallNow()
        let jump = (wall - boot) - wallOffset
        wallOffset = wall - boot
        if abs(jump) >= 1 {
            logger.notice(
                "the wall clock changed by \(Int(jump.rounded())) s; refresh timers and flag ages are unaffected",
                ["CLOCK_JUMP_SECONDS": String(Int(jump.rounded())), "PWFLAGS_EVENT": "clock-changed"])
            do {
                try cache?.restamp(at: reading(bootNow: boot))
            } catch {
                logger.warning("cannot re-stamp the disk cache after the wall-clock change: \(error)")
            }
        }
        if let age = cache?.judgeAgain(at: reading(bootNow: boot)) {
            policy.cacheAgeKnown(fetchedAt: boot - age)
            logger.notice(
                "the disk cache's age is known again after the wall-clock change", ["AGE_SECONDS": String(Int(age))])
        }
        publish()
        wake()
    }

    /// Serves the disk cache when it belongs to this application and user and is younger than CacheMaxAge
    /// (R7, R15); returns its fetch time on the boot clock.
    ///
    /// A cache whose age cannot be known (another boot, and the wall clock reads earlier than its fetch: a
    /// device booting at 1970 before NTP) is served provisionally, its age counted from now, so that it never
    /// outlives CacheMaxAge from the start; a wall-clock change judges it again (`wallClockChanged`).
    func loadCache(now: Double) -> Double? {
        guard
            let loaded = cache?.load(
                applicationCode: applicationCode, userId: userId, at: reading(bootNow: now),
                maxAge: policy.settings.cacheMaxAge)
        else { return nil }
        let entry: FlagCache.Entry
        let fetchedAt: Double
        switch loaded {
        case .rejected(.missing):
            logger.debug("no disk cache yet")
            return nil
        case .rejected(let rejection):
            logger.notice("ignored the disk cache: \(rejection)")
            return nil
        case .served(let served, let bootFetchedAt):
            (entry, fetchedAt) = (served, bootFetchedAt)
        case .provisional(let served, let bootFetchedAt):
            (entry, fetchedAt) = (served, bootFetchedAt)
            logger.notice(
                "the disk cache was fetched later than the wall clock reads now; it is served for at most"
                    + " CacheMaxAge from now, and judged again when the wall clock is set",
                ["FETCHED_AT": String(Int(entry.fetchedAt)), "PWFLAGS_EVENT": "cache-age-unknown"])
        }
        source.serve(
            FlagSet(entry.flags),
            expiry: source.expiry(fetchedAt: fetchedAt, maxAge: policy.settings.cacheMaxAge, clock: clock))
        logger.info(
            "serving the disk cache",
            ["FLAG_COUNT": String(entry.flags.count), "FETCHED_AT": String(Int(entry.fetchedAt))])
        return fetchedAt
    }

    func reading(bootNow: Double) -> CacheAge.Reading {
        CacheAge.Reading(bootID: bootID, boot: bootNow, wall: clock.wallNow())
    }
}
