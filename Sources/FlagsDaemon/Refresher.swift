import FlagsCore
import PushwooshAPI
import Synchronization

/// Keeps the flags up to date: the refresh policy's timers, one request in flight shared by every trigger,
/// the disk cache, the user id, the app state and the session (R7-R16).
///
/// Every time it keeps is on the boot clock (see `DaemonClock`); wall times are made only for the disk cache,
/// the log and, at the moment `status` is read, for people.
actor Refresher {
    /// How a refresh ended.
    enum FetchResult: Sendable {
        case fetched
        case failed(PushwooshError)
        /// The user changed while the request was in flight; its answer was thrown away (R8d).
        case superseded
    }

    /// Where the refresher is: it sends one request at a time, and once retired it sends and writes nothing.
    enum Phase {
        /// No request in flight.
        case idle
        /// A request for the user of `generation` is in flight; every trigger meanwhile shares `task` (R10).
        case fetching(generation: Int, task: Task<FetchResult, Never>)
        /// A reload replaced this refresher, or the daemon stops: nothing more is sent or written.
        case retired
    }

    private let fetcher: any FlagFetcher
    private let store: FlagStore
    private let stateDirectory: StateDirectory
    private let applicationCode: String
    private let defaultUserId: String
    /// Both clocks; `status` turns the boot times it publishes into wall times with it.
    let clock: any DaemonClock
    private let jitter: @Sendable () -> Double
    private let logger: Logger
    private let onSessionStart: @Sendable (Int) -> Void

    private var policy: RefreshPolicy
    private var userId: String
    /// Grows with every user change, so that an answer for the previous user is recognised and dropped.
    private var generation = 0
    private var phase = Phase.idle
    /// The wall clock's lead over the boot clock when last looked at: a change of it is a wall-clock change.
    private var wallOffset: Double
    /// The disk cache and its fetch time on both clocks.
    private var cache: CacheTimes
    private var lastError: (status: Int, at: Double)?
    /// The last failed write or removal of the disk cache, until one succeeds: flags are then served from memory
    /// only, and `status.cacheError` says so.
    private var cacheError: (reason: String, at: Double)?
    /// Ends the loop's sleep when a call changed what the policy waits for.
    private let wakes = WakeSignal()

    /// The status fields, readable without waiting on the actor.
    nonisolated let status: Mutex<RefresherStatus>

    /// The state-directory file that keeps a user id set over the socket across restarts.
    static let userIdFile = "user-id"

    init(
        fetcher: any FlagFetcher,
        store: FlagStore,
        stateDirectory: StateDirectory,
        configuration: Configuration,
        hwid: String,
        clock: any DaemonClock = SystemClock(),
        bootID: String? = Systemd.bootID(),
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        logger: Logger,
        onSessionStart: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.fetcher = fetcher
        self.store = store
        self.cache = CacheTimes(file: FlagCache(directory: stateDirectory), bootID: bootID)
        self.stateDirectory = stateDirectory
        self.applicationCode = configuration.applicationCode
        self.defaultUserId = configuration.userID ?? hwid
        self.clock = clock
        self.wallOffset = clock.wallNow() - clock.bootNow()
        self.jitter = jitter
        self.logger = logger
        self.onSessionStart = onSessionStart
        var settings = RefreshPolicy.Settings(configuration)
        // The local file is its own cache: its flags never expire.
        if !fetcher.persists { settings.cacheMaxAge = .infinity }
        let policy = RefreshPolicy(settings: settings)
        self.policy = policy
        let saved = stateDirectory.read(Self.userIdFile).map { String(decoding: $0, as: UTF8.self) }
        let userId = saved.flatMap { $0.isEmpty ? nil : $0 } ?? configuration.userID ?? hwid
        self.userId = userId
        self.status = Mutex(
            RefresherStatus(userId: userId, foreground: policy.isForeground, session: 0, problem: fetcher.problem)
        )
    }

    // MARK: Start and the timer loop

    /// Serves the disk cache when it is usable (R7), and starts the first session. Never waits for the network.
    func start() {
        let now = clock.bootNow()
        var cachedAt: Double?
        if fetcher.persists, fetcher.problem == nil { cachedAt = loadCache(now: now) }
        if let problem = fetcher.problem {
            logger.error("flags will not be requested: \(problem)")
        }
        policy.start(now: now, cachedFetchedAt: cachedAt)
        if policy.sessionStartedAt != nil { onSessionStart(policy.session) }
        publish()
    }

    /// Runs the automatic refreshes until cancelled: look at the policy, sleep until its next wake, again.
    func run() async {
        while !Task.isCancelled {
            // A call that changes the policy during the tick is seen by the tick or by the deadline after it.
            wakes.clear()
            await tick()
            guard !Task.isCancelled else { break }
            await sleep(until: policy.nextWake(now: clock.bootNow()))
        }
    }

    /// One look at the policy: expiry, a new session, an automatic request. Internal for the tests' clock.
    func tick() async {
        guard !isRetired else { return }
        let now = clock.bootNow()
        let due = policy.due(now: now)
        if due.sessionStarted {
            logger.info("a new session started", ["SESSION": String(policy.session)])
            onSessionStart(policy.session)
        }
        if due.expireFlags {
            logger.warning("the stored flags are older than CacheMaxAge and are no longer served (R15)")
            store.replace(with: FlagSet())
            removeCache()
        }
        publish()
        guard !due.refresh.isEmpty else { return }
        if fetcher.problem != nil {
            policy.requestStarted(now: now)
            publish()
            return
        }
        logger.debug("automatic refresh", ["TRIGGERS": due.refresh.map(\.rawValue).sorted().joined(separator: ",")])
        _ = await fetch(automatic: true)
    }

    /// One sleep on the boot clock until `deadline`, ended early by a wake signal or by cancellation.
    ///
    /// A resume also reaches `wallClockChanged`, which wakes the loop at once. Waking at least once a minute only
    /// bounds the damage should the sleep's clock and the boot clock ever differ; it is not a clock poll (no wall
    /// clock is read).
    private func sleep(until deadline: Double?) async {
        let until = min(deadline ?? .infinity, clock.bootNow() + 60)
        let clock = self.clock
        let wakes = self.wakes
        // Structured: both waits end with this call, and cancelling `run()` cancels them.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await clock.sleep(until: until) }
            group.addTask { await wakes.wait() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Ends the current sleep so that the loop looks at the policy again.
    private func wake() {
        wakes.signal()
    }

    private var isRetired: Bool {
        if case .retired = phase { return true }
        return false
    }

    // MARK: Requests

    /// One request in flight per user, shared by every trigger that arrives while it runs (R10).
    /// A request a caller prompts waits for the policy's spacing (one a second), and everyone who asks in the
    /// meantime shares it.
    private func fetch(automatic: Bool) async -> FetchResult {
        switch phase {
        case .retired: return .failed(Self.retiredError)
        case .fetching(let generation, let task) where generation == self.generation: return await task.value
        case .idle, .fetching: break
        }
        let now = clock.bootNow()
        let delay = automatic ? 0 : policy.earliestCallerRequest(now: now) - now
        // Unstructured because callers share it: the one who started it may go while others still wait on it.
        let task = Task { await self.performFetch(automatic: automatic, after: delay) }
        phase = .fetching(generation: generation, task: task)
        return await task.value
    }

    private func performFetch(automatic: Bool, after delay: Double) async -> FetchResult {
        if delay > 0 {
            let generation = self.generation
            await clock.sleep(until: clock.bootNow() + delay)
            guard generation == self.generation else { return .superseded }
            if Task.isCancelled { return .failed(.notSent("the daemon is stopping")) }
        }
        guard !isRetired else { return .failed(Self.retiredError) }
        policy.requestStarted(now: clock.bootNow())
        publish()
        let generation = self.generation
        let result = await fetcher.fetch(userId: userId)
        guard generation == self.generation else { return .superseded }
        // A reply that arrives after a reload (or shutdown) retired this refresher changes nothing.
        guard !isRetired else { return .failed(Self.retiredError) }
        // Done in the same actor turn as the update: a trigger that comes after this answer sends its own
        // request instead of sharing one that is no longer in flight (R10, R12).
        phase = .idle
        let now = clock.bootNow()
        switch result {
        case .success(let response):
            cache.replacedInMemory()
            policy.requestFinished(
                response.partial ? .partial : .complete, automatic: automatic, now: now, jitter: jitter())
            lastError = nil
            // status first, then listeners: a client that reads status on a change sees the new fetch time.
            publish()
            if !fetcher.appliesFlags { store.replace(with: FlagSet(response.flags)) }
            if response.partial {
                logger.notice(
                    "Pushwoosh sent a partial response: served, not stored (R13)",
                    ["FLAG_COUNT": String(response.flags.count)])
            } else if fetcher.persists {
                do {
                    try cache.store(
                        response.flags, applicationCode: applicationCode, userId: userId, at: reading(bootNow: now))
                    cacheError = nil
                } catch {
                    cacheError = (error.description, now)
                    logger.error(
                        "cannot write the disk cache; flags are served from memory: \(error)",
                        ["PWFLAGS_EVENT": "cache-write-failed"])
                }
            }
            if fetcher.persists {
                logger.info(
                    "fetched flags",
                    ["FLAG_COUNT": String(response.flags.count), "REVISION": String(store.current.revision)])
            }
            publish()
            return .fetched
        case .failure(let error):
            policy.requestFinished(.failed, automatic: automatic, now: now, jitter: jitter())
            lastError = (error.status, now)
            logger.warning(
                "refresh failed; the stored flags stay in effect: \(error.reason)",
                ["HTTP_STATUS": String(error.status), "PWFLAGS_EVENT": "refresh-failed"]
            )
            publish()
            return .failed(error)
        }
    }

    // MARK: Calls from clients

    /// `refresh` (R10, R12, R16): a request, or the stored flags inside the throttle window.
    /// Returns whether the answer came from the network.
    func refresh() async -> Result<Bool, PushwooshError> {
        if let problem = fetcher.problem { return .failure(.notSent(problem)) }
        guard fetcher.persists else {
            // The local file is read for this caller, now: sharing a read that began before the caller's
            // request could answer with what the file held before the caller changed it.
            return await fetcher.fetch(userId: userId).map { _ in false }
        }
        if !policy.manualRefreshSendsRequest(now: clock.bootNow()) { return .success(false) }
        switch await fetch(automatic: false) {
        case .fetched: return .success(fetcher.persists)
        case .failed(let error): return .failure(error)
        case .superseded: return .failure(.notSent("the user id changed while the request was in flight"))
        }
    }

    /// `setUserId` (R8d): the previous user's flags are gone from memory and disk before this returns.
    func setUserId(_ requested: String) -> String {
        // The caller carries it out again on the stack that replaced this one.
        guard !isRetired else { return userId }
        let newUserId = requested.isEmpty ? defaultUserId : requested
        do {
            if requested.isEmpty {
                try stateDirectory.remove(Self.userIdFile)
            } else {
                try stateDirectory.writeAtomically(Self.userIdFile, Array(requested.utf8))
            }
        } catch {
            logger.warning("cannot keep the user id in the state directory: \(error)")
        }
        guard newUserId != userId else { return userId }
        userId = newUserId
        generation += 1
        if case .fetching(_, let task) = phase { task.cancel() }
        phase = .idle
        if fetcher.persists {
            store.replace(with: FlagSet())
            removeCache()
        }
        policy.userChanged(now: clock.bootNow())
        if policy.sessionStartedAt != nil { onSessionStart(policy.session) }
        logger.info("the user id changed; the previous user's flags are discarded", ["PWFLAGS_EVENT": "user-changed"])
        publish()
        wake()
        return userId
    }

    /// `setAppState` (`Lifecycle=client`, R8a): returns whether a session started.
    func setAppState(foreground: Bool) -> Bool {
        let started = policy.appStateChanged(toForeground: foreground, now: clock.bootNow())
        if started { onSessionStart(policy.session) }
        publish()
        wake()
        return started
    }

    /// `pushRegistered` (R8c): returns whether a refresh was started.
    func pushRegistered() -> Bool {
        guard fetcher.persists, fetcher.problem == nil else { return false }
        let started = policy.pushRegistered(now: clock.bootNow())
        publish()
        wake()
        return started
    }

    /// A reload changed the timers.
    func update(configuration: Configuration) {
        var settings = RefreshPolicy.Settings(configuration)
        if !fetcher.persists { settings.cacheMaxAge = .infinity }
        policy.update(settings: settings, now: clock.bootNow())
        publish()
        wake()
    }

    /// A reload replaced this refresher, or the daemon stops: cancels what is in flight (its callers get status
    /// 0, so that stopping never waits for a slow server), and from now on nothing is sent and nothing is written
    /// (store, disk cache, user id), not even for a reply already on its way.
    func retire() {
        if case .fetching(_, let task) = phase { task.cancel() }
        phase = .retired
        wake()
    }

    private static let retiredError = PushwooshError.notSent("the flag source was replaced or is stopping")

    /// The current session number (impressions are once per session).
    var session: Int { policy.session }

    // MARK: The wall clock

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
                try cache.restamp(at: reading(bootNow: boot))
            } catch {
                logger.warning("cannot re-stamp the disk cache after the wall-clock change: \(error)")
            }
        }
        if let age = cache.judgeAgain(at: reading(bootNow: boot)) {
            policy.cacheAgeKnown(fetchedAt: boot - age)
            logger.notice(
                "the disk cache's age is known again after the wall-clock change", ["AGE_SECONDS": String(Int(age))])
        }
        publish()
        wake()
    }

    // MARK: The disk cache at start

    /// Serves the disk cache when it belongs to this application and user and is younger than CacheMaxAge
    /// (R7, R15); returns its fetch time on the boot clock.
    ///
    /// A cache whose age cannot be known (another boot, and the wall clock reads earlier than its fetch: a
    /// device booting at 1970 before NTP) is served provisionally, its age counted from now, so that it never
    /// outlives CacheMaxAge from the start; a wall-clock change judges it again (`wallClockChanged`).
    private func loadCache(now: Double) -> Double? {
        let loaded = cache.load(
            applicationCode: applicationCode, userId: userId, at: reading(bootNow: now),
            maxAge: policy.settings.cacheMaxAge)
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
        store.replace(with: FlagSet(entry.flags))
        logger.info(
            "serving the disk cache",
            ["FLAG_COUNT": String(entry.flags.count), "FETCHED_AT": String(Int(entry.fetchedAt))])
        return fetchedAt
    }

    private func reading(bootNow: Double) -> CacheAge.Reading {
        CacheAge.Reading(bootID: cache.bootID, boot: bootNow, wall: clock.wallNow())
    }

    // MARK: Internals

    private func removeCache() {
        do {
            try cache.remove()
            cacheError = nil
        } catch {
            cacheError = (error.description, clock.bootNow())
            logger.error("cannot remove the disk cache: \(error)", ["PWFLAGS_EVENT": "cache-remove-failed"])
        }
    }

    private func publish() {
        let now = clock.bootNow()
        let snapshot = RefresherStatus(
            userId: userId,
            fetchedAt: policy.fetchedAt,
            cacheMaxAge: policy.settings.cacheMaxAge,
            stale: policy.isStale(now: now),
            partial: policy.servesPartial,
            lastError: lastError,
            nextRefreshAt: fetcher.problem == nil ? policy.nextRefreshAt(now: now) : nil,
            foreground: policy.isForeground,
            sessionStartedAt: policy.sessionStartedAt,
            session: policy.session,
            problem: fetcher.problem,
            cacheError: cacheError
        )
        status.withLock { $0 = snapshot }
    }
}
