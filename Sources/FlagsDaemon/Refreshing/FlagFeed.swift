import FlagsCore
import PushwooshAPI
import UnixIO

/// Everything that happens to a source's answer: the store, the disk cache, the expiry the flags carry and the
/// status that describes them (R7, R9, R13, R15). It is the one writer of source flags: a read of the local file
/// arrives here as a fetch from Pushwoosh does.
///
/// The refresher decides when to ask and hands every answer here; an answer travels one way, from the source
/// through the feed to the store (whose observers tell the listeners) and the disk, and nothing here calls the
/// refresher or the source back. Owned by the refresher's actor: its steps run one at a time, in the order the
/// answers arrived, and none runs once the refresher retired.
struct FlagFeed {
    private let store: FlagStore
    /// The mark on every flag the source serves.
    private let mark: FlagSource
    /// Where a watched source reads from (the local file), for the log; nil for a fetched source. A watched
    /// source serves every user the same.
    private let watched: String?
    /// True once a watched source's flags were served: the first read is worth an info line even when it changes
    /// nothing (an empty file after an empty start).
    private var servedOnce = false
    /// The Pushwoosh application the disk cache belongs to; nil without a disk cache.
    private let applicationCode: String?
    /// The disk cache and its fetch time on both clocks; nil when the source keeps none.
    private var cache: CacheTimes?
    /// The seed (`SeedFile`): served, its flags marked `seed`, whenever the source has no usable flags of its own.
    private let seed: (file: String, flags: FlagSet)?
    /// The seed's flags are the ones served.
    private var servingSeed = false
    /// This boot's id, with which the disk cache records its boot-clock times.
    private let bootID: String?
    private let clock: any DaemonClock
    private let logger: Logger

    private var lastError: RefresherStatus.LastFailure?
    /// The last failed write or removal of the disk cache, until one succeeds: flags are then served from memory
    /// only, and `status.cacheError` says so.
    private var cacheError: (reason: String, at: Double)?
    /// True from the moment the flags reached `CacheMaxAge` (R15) until flags are served again, for `explain`.
    private var expired = false
    /// The refresher's part of the status as it last published it, for a change of the feed's own part.
    private var timers: RefresherStatus

    /// The status fields, readable without waiting on the refresher's actor.
    let status: Locked<RefresherStatus>
    /// Told at every status published whether the flags are stale, for the evaluation records' reason; nil once
    /// the refresher retired, so that a retired source never marks the tally the next one keeps.
    private var evaluations: EvaluationTally?

    init(
        provider: any FlagProvider, store: FlagStore, clock: any DaemonClock, bootID: String?, logger: Logger,
        initial: RefresherStatus, evaluations: EvaluationTally
    ) {
        self.store = store
        self.evaluations = evaluations
        self.mark = provider.mark
        switch provider.upkeep {
        case .watched(let watch):
            self.watched = watch.location
            self.applicationCode = nil
            self.cache = nil
            self.seed = nil
        case .fetched(let upstream):
            self.watched = nil
            self.applicationCode = upstream.applicationCode
            self.cache = CacheTimes(file: upstream.diskCache, bootID: bootID)
            self.seed = upstream.seed.map { ($0.file, FlagSet($0.seed.flags)) }
        }
        self.bootID = bootID
        self.clock = clock
        self.logger = logger
        self.timers = initial
        self.status = Locked(initial)
    }

    // MARK: Answers

    /// Serves what the source answered until `expiry`, keeps a complete response on disk, and publishes the
    /// status: first, so that a client that reads `status` on the change sees the new fetch time; what listeners
    /// are told (`expiresAt` included) travels with the update itself.
    mutating func received(
        _ response: FeatureFlagsResponse, userId: String, expiry: FlagExpiry, timers: RefresherStatus
    ) {
        let now = clock.bootNow()
        cache?.replacedInMemory()
        lastError = nil
        expired = false
        servingSeed = false
        publish(timers)
        let update = store.replace(with: FlagSet(response.flags), from: mark, expiry: expiry)
        let (count, revision) = (String(response.flags.count), String(store.current.revision))
        if let watched {
            // A re-read that changes nothing (a refresh, a touch) is not worth an info line.
            let level: LogLevel = update != nil || !servedOnce ? .info : .debug
            servedOnce = true
            logger.log(
                level, "loaded the local flags file",
                ["FLAGS_FILE": watched, "FLAG_COUNT": count, "REVISION": revision])
        } else {
            logger.info("fetched flags", ["FLAG_COUNT": count, "REVISION": revision])
        }
        if response.partial {
            logger.notice(
                "Pushwoosh sent a partial response: served, not stored (R13)",
                ["FLAG_COUNT": String(response.flags.count)])
        } else if let applicationCode, cache != nil {
            let reading = reading(bootNow: now)
            do {
                try cache?.store(response.flags, applicationCode: applicationCode, userId: userId, at: reading)
                cacheError = nil
            } catch {
                cacheError = (error.description, now)
                logger.error(
                    "cannot write the disk cache; flags are served from memory: \(error)",
                    ["PWFLAGS_EVENT": "cache-write-failed"])
            }
        }
        publish(timers)
    }

    /// A request failed: the stored flags stay in effect, and `status.lastError` says why.
    mutating func failed(_ error: PushwooshError, at now: Double, timers: RefresherStatus) {
        lastError = RefresherStatus.LastFailure(status: error.status, kind: error.kind, reason: error.reason, at: now)
        logger.warning(
            "refresh failed (\(error.kind.rawValue)); the stored flags stay in effect: \(error.reason)",
            [
                "HTTP_STATUS": String(error.status), "PWFLAGS_ERROR_KIND": error.kind.rawValue,
                "PWFLAGS_EVENT": "refresh-failed",
            ]
        )
        publish(timers)
    }

    /// The flags reached `CacheMaxAge` (R15): no longer served, in memory or on disk.
    mutating func expire(timers: RefresherStatus) {
        logger.warning("the stored flags are older than CacheMaxAge and are no longer served (R15)")
        expired = true
        // Status first, as for a fetch: a client that reads `status` or `explain` on the removal sees the flags
        // gone, not a fetch time that no longer holds.
        publish(timers)
        serveNoneOfItsOwn()
        removeCache()
    }

    /// The user id changed (R8d): flags fetched for the previous user are gone from memory and disk. A watched
    /// source serves every user the same and keeps its flags.
    mutating func userChanged(notKept: String? = nil) {
        expired = false
        if watched == nil { serveNoneOfItsOwn() }
        removeCache()
        // After the cache's removal, whose success would clear it: status says the user id was not kept.
        if let notKept { cacheError = (notKept, clock.bootNow()) }
    }

    /// A state write that failed (the user id), in `status.cacheError` until a cache write or removal succeeds.
    mutating func noteStateError(_ reason: String, at now: Double) {
        cacheError = (reason, now)
    }

    /// Serves no flags of the source's own (at start without a usable cache or a readable file, at `CacheMaxAge`,
    /// for a new user): the seed's, until the first good fetch, when there is one; else none. The seed is the
    /// image maker's known-good set, so it stands in whenever the source has nothing usable, expiry included.
    mutating func serveNoneOfItsOwn() {
        guard let seed else {
            store.replace(with: FlagSet(), from: mark, expiry: .never)
            return
        }
        if !servingSeed {
            logger.notice(
                "no usable flags of the source's own: serving the seed until the first fetch",
                ["SEED_FILE": seed.file, "FLAG_COUNT": String(seed.flags.count), "PWFLAGS_EVENT": "seed-served"])
        }
        servingSeed = true
        // Status first, as for a fetch.
        publish(timers)
        store.replace(with: seed.flags, from: .seed, expiry: .never)
    }

    /// The expiry of the flags served moved without a change of flags (a reload changed `CacheMaxAge`, a
    /// wall-clock change made the age of the disk cache known).
    func restamp(_ expiry: FlagExpiry) {
        store.restamp(expiry)
    }

    /// Publishes the status: the refresher's `timers` with what the feed knows of the flags and the disk. The
    /// tally learns `stale` here too, so that the records' reason changes when the status does.
    mutating func publish(_ timers: RefresherStatus) {
        self.timers = timers
        var snapshot = timers
        snapshot.lastError = lastError
        snapshot.cacheError = cacheError
        snapshot.expired = expired
        snapshot.servingSeed = servingSeed
        status.withLock { $0 = snapshot }
        evaluations?.markStale(snapshot.stale)
        StatusChange.signal.signal()
    }

    /// The refresher retired: from now on the status it may still publish tells the tally nothing.
    mutating func retire() {
        evaluations = nil
    }

    // MARK: The disk cache

    /// Serves the disk cache when it belongs to this application and `userId` and is younger than `maxAge`
    /// (R7, R15); returns its fetch time on the boot clock.
    ///
    /// A cache whose age cannot be known (another boot, and the wall clock reads earlier than its fetch: a
    /// device booting at 1970 before NTP) is served provisionally, its age counted from now, so that it never
    /// outlives CacheMaxAge from the start; a wall-clock change judges it again (`wallClockChanged`).
    mutating func loadCache(userId: String, maxAge: Double, now: Double) -> Double? {
        let reading = reading(bootNow: now)
        guard let applicationCode,
            let loaded = cache?.load(applicationCode: applicationCode, userId: userId, at: reading, maxAge: maxAge)
        else { return nil }
        let entry: FlagCache.Entry
        let fetchedAt: Double
        switch loaded {
        case .rejected(.missing):
            logger.debug("no disk cache yet")
            return nil
        case .rejected(.newerFormat(let format)):
            cache?.file.setAside(found: format, logger: logger)
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
        servingSeed = false
        store.replace(
            with: FlagSet(entry.flags), from: mark,
            expiry: FlagExpiry(fetchedAt: fetchedAt, maxAge: maxAge, clock: clock))
        logger.info(
            "serving the disk cache",
            ["FLAG_COUNT": String(entry.flags.count), "FETCHED_AT": String(Int(entry.fetchedAt))])
        return fetchedAt
    }

    /// After a wall-clock change of `jumped` seconds or more: the disk cache's wall fetch time made right for the
    /// next start; returns the age of a provisional cache when it can now be known.
    mutating func wallClockChanged(jumped: Bool) -> Double? {
        let now = reading(bootNow: clock.bootNow())
        if jumped {
            do {
                try cache?.restamp(at: now)
            } catch {
                logger.warning("cannot re-stamp the disk cache after the wall-clock change: \(error)")
            }
        }
        return cache?.judgeAgain(at: now)
    }

    /// Removes the disk cache, when the source keeps one.
    private mutating func removeCache() {
        guard cache != nil else { return }
        do {
            try cache?.remove()
            cacheError = nil
        } catch {
            cacheError = (error.description, clock.bootNow())
            logger.error("cannot remove the disk cache: \(error)", ["PWFLAGS_EVENT": "cache-remove-failed"])
        }
    }

    private func reading(bootNow: Double) -> CacheAge.Reading {
        CacheAge.Reading(bootID: bootID, boot: bootNow, wall: clock.wallNow())
    }
}
