import FlagsCore
import PushwooshAPI
import Synchronization

/// Keeps the flags up to date: the refresh policy's timers, one request in flight shared by every trigger,
/// the disk cache, the user id, the app state and the session (R7-R16).
actor Refresher {
    /// How a refresh ended.
    enum FetchResult: Sendable {
        case fetched
        case failed(PushwooshError)
        /// The user changed while the request was in flight; its answer was thrown away (R8d).
        case superseded
    }

    private let fetcher: any FlagFetcher
    private let store: FlagStore
    private let cache: FlagCache
    private let stateDirectory: StateDirectory
    private let applicationCode: String
    private let defaultUserId: String
    private let clock: any WallClock
    private let jitter: @Sendable () -> Double
    private let logger: Logger
    private let onSessionStart: @Sendable (Int) -> Void

    private var policy: RefreshPolicy
    private var userId: String
    /// Grows with every user change, so that an answer for the previous user is recognised and dropped.
    private var generation = 0
    private var inFlight: (generation: Int, task: Task<FetchResult, Never>)?
    private var lastError: (status: Int, at: Double)?
    /// The last failed write or removal of the disk cache, until one succeeds: flags are then served from memory
    /// only, and `status.cacheError` says so.
    private var cacheError: (reason: String, at: Double)?
    private var wakeup: CheckedContinuation<Void, Never>?
    private var timer: Task<Void, Never>?
    /// Set when a reload replaced this refresher (or at shutdown): it sends and writes nothing more.
    private var retired = false

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
        clock: any WallClock = SystemWallClock(),
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        logger: Logger,
        onSessionStart: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.fetcher = fetcher
        self.store = store
        self.cache = FlagCache(directory: stateDirectory)
        self.stateDirectory = stateDirectory
        self.applicationCode = configuration.applicationCode
        self.defaultUserId = configuration.userID ?? hwid
        self.clock = clock
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
        let now = clock.now()
        var cachedAt: Double?
        if fetcher.persists, fetcher.problem == nil {
            switch cache.load(
                applicationCode: applicationCode, userId: userId, now: now, maxAge: policy.settings.cacheMaxAge)
            {
            case .success(let entry):
                store.replace(with: FlagSet(entry.flags))
                cachedAt = entry.fetchedAt
                logger.info(
                    "serving the disk cache",
                    ["FLAG_COUNT": String(entry.flags.count), "FETCHED_AT": String(Int(entry.fetchedAt))])
            case .failure(.missing):
                logger.debug("no disk cache yet")
            case .failure(let rejection):
                logger.notice("ignored the disk cache: \(rejection)")
            }
        }
        if let problem = fetcher.problem {
            logger.error("flags will not be requested: \(problem)")
        }
        policy.start(now: now, cachedFetchedAt: cachedAt)
        if policy.sessionStartedAt != nil { onSessionStart(policy.session) }
        publish()
    }

    /// Runs the automatic refreshes until cancelled.
    func run() async {
        await withTaskCancellationHandler {
            while !Task.isCancelled {
                await tick()
                guard !Task.isCancelled else { break }
                await waitUntil(policy.nextWake(now: clock.now()))
            }
        } onCancel: {
            Task { await self.wake() }
        }
    }

    private func tick() async {
        guard !retired else { return }
        let now = clock.now()
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

    private func waitUntil(_ deadline: Double?) async {
        await withCheckedContinuation { continuation in
            wakeup = continuation
            // Waking at least once a minute notices a wall clock that jumped (NTP setting the time at boot).
            let delay = min(60, max(0, (deadline ?? .infinity) - clock.now()))
            let clock = self.clock
            timer = Task {
                await clock.sleep(seconds: delay)
                guard !Task.isCancelled else { return }
                self.wake()
            }
        }
    }

    /// Ends the current wait so that the loop looks at the policy again.
    private func wake() {
        timer?.cancel()
        timer = nil
        wakeup?.resume()
        wakeup = nil
    }

    // MARK: Requests

    /// One request in flight per user, shared by every trigger that arrives while it runs (R10).
    private func fetch(automatic: Bool) async -> FetchResult {
        if let inFlight, inFlight.generation == generation { return await inFlight.task.value }
        let task = Task { await self.performFetch(automatic: automatic) }
        inFlight = (generation, task)
        return await task.value
    }

    private func performFetch(automatic: Bool) async -> FetchResult {
        guard !retired else { return .failed(Self.retiredError) }
        policy.requestStarted(now: clock.now())
        publish()
        let generation = self.generation
        let result = await fetcher.fetch(userId: userId)
        guard generation == self.generation else { return .superseded }
        // A reply that arrives after a reload (or shutdown) retired this refresher changes nothing.
        guard !retired else { return .failed(Self.retiredError) }
        // Done in the same actor turn as the update: a trigger that comes after this answer sends its own
        // request instead of sharing one that is no longer in flight (R10, R12).
        inFlight = nil
        let now = clock.now()
        switch result {
        case .success(let response):
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
                let entry = FlagCache.Entry(
                    applicationCode: applicationCode, userId: userId, fetchedAt: now, flags: response.flags)
                do {
                    try cache.store(entry)
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
        if !policy.manualRefreshSendsRequest(now: clock.now()) { return .success(false) }
        switch await fetch(automatic: false) {
        case .fetched: return .success(fetcher.persists)
        case .failed(let error): return .failure(error)
        case .superseded: return .failure(.notSent("the user id changed while the request was in flight"))
        }
    }

    /// `setUserId` (R8d): the previous user's flags are gone from memory and disk before this returns.
    func setUserId(_ requested: String) -> String {
        // The caller carries it out again on the stack that replaced this one.
        guard !retired else { return userId }
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
        inFlight?.task.cancel()
        inFlight = nil
        if fetcher.persists {
            store.replace(with: FlagSet())
            removeCache()
        }
        policy.userChanged(now: clock.now())
        if policy.sessionStartedAt != nil { onSessionStart(policy.session) }
        logger.info("the user id changed; the previous user's flags are discarded", ["PWFLAGS_EVENT": "user-changed"])
        publish()
        wake()
        return userId
    }

    /// `setAppState` (`Lifecycle=client`, R8a): returns whether a session started.
    func setAppState(foreground: Bool) -> Bool {
        let started = policy.appStateChanged(toForeground: foreground, now: clock.now())
        if started { onSessionStart(policy.session) }
        publish()
        wake()
        return started
    }

    /// `pushRegistered` (R8c): returns whether a refresh was started.
    func pushRegistered() -> Bool {
        guard fetcher.persists, fetcher.problem == nil else { return false }
        let started = policy.pushRegistered(now: clock.now())
        publish()
        wake()
        return started
    }

    /// A reload changed the timers.
    func update(configuration: Configuration) {
        var settings = RefreshPolicy.Settings(configuration)
        if !fetcher.persists { settings.cacheMaxAge = .infinity }
        policy.update(settings: settings, now: clock.now())
        publish()
        wake()
    }

    /// Shutdown: the request in flight is cancelled (its callers get status 0) so that stopping never waits
    /// for a slow server.
    func shutdown() {
        inFlight?.task.cancel()
        wake()
    }

    /// A reload replaced this refresher, or the daemon stops: cancels what is in flight, and from now on nothing
    /// is sent and nothing is written (store, disk cache, user id), not even for a reply already on its way.
    func retire() {
        retired = true
        shutdown()
    }

    private static let retiredError = PushwooshError.notSent("the flag source was replaced or is stopping")

    /// The current session number (impressions are once per session).
    var session: Int { policy.session }

    // MARK: Internals

    private func removeCache() {
        do {
            try cache.remove()
            cacheError = nil
        } catch {
            cacheError = (error.description, clock.now())
            logger.error("cannot remove the disk cache: \(error)", ["PWFLAGS_EVENT": "cache-remove-failed"])
        }
    }

    private func publish() {
        let now = clock.now()
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
