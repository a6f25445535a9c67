import FlagsCore
import PushwooshAPI
import UnixIO

/// Decides when to ask the source: the refresh policy's timers, one request in flight shared by every trigger,
/// the user id, the app state and the session (R7-R16). What an answer does is the feed's (`FlagFeed`).
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

    // Internal rather than private for Refresher+Calls and Refresher+WallClock; being the actor's, nothing else
    // can change them.
    /// The local file or Pushwoosh: it fetches and describes itself; it never holds or serves an answer.
    let provider: any FlagProvider
    /// What an answer does: the store, the disk cache, the expiry and the status. The refresher only decides when
    /// to ask.
    var feed: FlagFeed
    let stateDirectory: StateDirectory
    let defaultUserId: String
    /// Both clocks; `status` turns the boot times it publishes into wall times with it.
    let clock: any DaemonClock
    private let jitter: @Sendable () -> Double
    let logger: Logger
    let onSessionStart: @Sendable (Int) -> Void
    /// Counts every request that ended, by trigger and outcome, for `metrics`.
    let metrics: DaemonMetrics

    var policy: RefreshPolicy
    var userId: String
    /// What the state directory's user-id file holds ("" when there is none), as far as this refresher wrote or
    /// read it; nil when a write failed, so that the next `setUserId` writes again.
    var userIdFileHolds: String?
    /// Grows with every user change, so that an answer for the previous user is recognised and dropped.
    var generation = 0
    var phase = Phase.idle
    /// A watched source's reads for callers: whether one runs, and the callers who came during it and share the
    /// next (`readItself`).
    var readRunning = false
    var readWaiters: [CheckedContinuation<Result<Void, PushwooshError>, Never>] = []
    /// Answers are numbered as they are asked for, and one is served only when none asked for after it was served
    /// already: a read of the file that began before an edit never lands after one that began after it.
    var answersAsked = 0
    private var answerServed = 0
    /// The wall clock's lead over the boot clock when last looked at: a change of it is a wall-clock change.
    var wallOffset: Double
    /// Ends the loop's sleep when a call changed what the policy waits for.
    private let wakes = WakeSignal()
    /// Rings `wakes` at the policy's next wake; a wake before it leaves its sleep alone (`Alarm` says why).
    private let alarm: Alarm

    /// The status fields, readable without waiting on the actor (the feed publishes them).
    nonisolated let status: Locked<RefresherStatus>

    /// The state-directory file that keeps a user id set over the socket across restarts.
    static let userIdFile = "user-id"

    init(
        provider: any FlagProvider,
        store: FlagStore,
        stateDirectory: StateDirectory,
        configuration: Configuration,
        hwid: String,
        clock: any DaemonClock = SystemClock(),
        bootID: String? = Systemd.bootID(),
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        logger: Logger,
        metrics: DaemonMetrics = DaemonMetrics(),
        evaluations: EvaluationTally = EvaluationTally(),
        onSessionStart: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.metrics = metrics
        self.provider = provider
        self.stateDirectory = stateDirectory
        self.defaultUserId = configuration.userID ?? hwid
        self.clock = clock
        self.alarm = Alarm(clock: clock, rings: wakes)
        self.wallOffset = clock.wallNow() - clock.bootNow()
        self.jitter = jitter
        self.logger = logger
        self.onSessionStart = onSessionStart
        // F1: the device's own phase, stable across restarts, from its HWID.
        let policy = RefreshPolicy(
            settings: Self.settings(configuration, provider: provider), phase: RefreshPolicy.phase(forDevice: hwid))
        self.policy = policy
        let saved = stateDirectory.read(Self.userIdFile).map { String(decoding: $0, as: UTF8.self) }
        userIdFileHolds = saved ?? ""
        let userId = saved.flatMap { $0.isEmpty ? nil : $0 } ?? configuration.userID ?? hwid
        self.userId = userId
        let feed = FlagFeed(
            provider: provider, store: store, clock: clock, bootID: bootID, logger: logger,
            initial: RefresherStatus(
                userId: userId, foreground: policy.isForeground, session: 0, problem: provider.problem),
            evaluations: evaluations)
        self.feed = feed
        self.status = feed.status
    }

    /// The refresh policy's settings for `configuration`: a watched source is its own cache, so its flags never
    /// reach `CacheMaxAge`.
    static func settings(_ configuration: Configuration, provider: any FlagProvider) -> RefreshPolicy.Settings {
        var settings = RefreshPolicy.Settings(configuration)
        if provider.isWatched { settings.cacheMaxAge = .infinity }
        return settings
    }

    // MARK: Start and the timer loop

    /// Serves the disk cache when it is usable (R7), or what a watched source reads now, else nothing, and starts
    /// the first session. Never waits for the network.
    func start() async {
        // One hold for every layer: an impression's Retry-After reaches the policy, status, explain and metrics.
        provider.impressionSink?.retryAfterHold?.observe { [weak self] seconds in
            Task { await self?.senderHeld(seconds: seconds) }
        }
        let now = clock.bootNow()
        var cachedAt: Double?
        if provider.problem == nil {
            cachedAt = feed.loadCache(userId: userId, maxAge: policy.settings.cacheMaxAge, now: now)
        }
        if let problem = provider.problem {
            logger.error("flags will not be requested: \(problem)")
        }
        policy.start(now: now, cachedFetchedAt: cachedAt)
        if policy.sessionStartedAt != nil { onSessionStart(policy.session) }
        publish()
        guard cachedAt == nil else { return }
        if provider.isWatched, await readAtStart() { return }
        // R16, no usable disk cache, or a file that cannot be read: nothing is served until a fetch or a read
        // succeeds; whatever a previous provider served goes, so that a reload serves what a restart would.
        feed.serveNoneOfItsOwn()
    }

    /// Reads a watched source at start; true when the read succeeded. When the policy has a request due now (the
    /// first session's, without flags), the read is that request, counted and timed as a fetch: the first tick then
    /// finds nothing due, where it used to read the file a second time.
    private func readAtStart() async -> Bool {
        let due = policy.due(now: clock.bootNow()).refresh
        guard !due.isEmpty else { return (try? await readItself().get()) != nil }
        guard case .fetched = await fetch(automatic: true, trigger: Self.trigger(due)) else { return false }
        return true
    }

    /// What asked for an automatic request, as `metrics` names it: the policy's triggers, joined by `+`.
    private static func trigger(_ triggers: Set<RefreshPolicy.Trigger>) -> String {
        triggers.map(\.rawValue).sorted().joined(separator: "+")
    }

    /// Runs the automatic refreshes until cancelled: look at the policy, sleep until its next wake, again.
    func run() async {
        let alarm = self.alarm
        await withDiscardingTaskGroup { group in
            group.addTask { await alarm.run() }
            while !Task.isCancelled {
                // A call that changes the policy during the tick is seen by the tick or by the deadline after it.
                wakes.clear()
                await tick()
                guard !Task.isCancelled else { break }
                await sleep(until: policy.nextWake(now: clock.bootNow()))
            }
            group.cancelAll()
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
        if due.expireFlags { feed.expire(timers: timers(now: now)) }
        publish()
        guard !due.refresh.isEmpty else { return }
        if provider.problem != nil {
            policy.requestStarted(now: now)
            publish()
            return
        }
        logger.debug("automatic refresh", ["TRIGGERS": due.refresh.map(\.rawValue).sorted().joined(separator: ",")])
        _ = await fetch(automatic: true, trigger: Self.trigger(due.refresh))
    }

    /// One wait until `deadline` on the boot clock (the alarm's), ended early by a wake signal or by cancellation.
    ///
    /// A resume also reaches `wallClockChanged`, which wakes the loop at once. Waking at least once a minute
    /// while a deadline is ahead only bounds the damage should the sleep's clock and the boot clock ever differ;
    /// it is not a clock poll (no wall clock is read). With no deadline (the local file, a source that cannot
    /// fetch) only a wake signal or cancellation ends the wait: an idle daemon sets no timer at all.
    private func sleep(until deadline: Double?) async {
        alarm.set(deadline.map { min($0, clock.bootNow() + 60) })
        await wakes.wait()
    }

    /// Ends the current sleep so that the loop looks at the policy again.
    func wake() {
        wakes.signal()
    }

    var isRetired: Bool {
        if case .retired = phase { return true }
        return false
    }

    // MARK: Requests

    /// One request in flight per user, shared by every trigger that arrives while it runs (R10).
    /// A request a caller prompts waits for the policy's spacing (one a second), and everyone who asks in the
    /// meantime shares it.
    /// `trigger` names what asked, for `metrics`: the policy's triggers, or `call` for a caller's `refresh`.
    func fetch(automatic: Bool, trigger: String = "call") async -> FetchResult {
        await startFetch(automatic: automatic, trigger: trigger).value
    }

    /// The request in flight for the current user, or a new one: `fetch` without the wait (internal for the
    /// tests, which change the user between a request's start and its task's first step).
    func startFetch(automatic: Bool, trigger: String = "call") -> Task<FetchResult, Never> {
        switch phase {
        case .retired: return Task { .failed(Self.retiredError) }
        case .fetching(let generation, let task) where generation == self.generation: return task
        case .idle, .fetching: break
        }
        let now = clock.bootNow()
        let delay = automatic ? 0 : policy.earliestCallerRequest(now: now) - now
        let generation = self.generation
        // Unstructured because callers share it: the one who started it may go while others still wait on it.
        let task = Task {
            await self.performFetch(automatic: automatic, trigger: trigger, after: delay, generation: generation)
        }
        phase = .fetching(generation: generation, task: task)
        return task
    }

    /// One request for the user of `generation`. Every step after a wait checks that the user is still that one:
    /// a `setUserId` that comes between the task's start and its first step (it cancels the task) must neither
    /// send for the new user from this task nor count the cancelled send as a failure; the loop sends the new
    /// user's own request.
    private func performFetch(
        automatic: Bool, trigger: String, after delay: Double, generation: Int
    ) async -> FetchResult {
        guard generation == self.generation else { return .superseded }
        if delay > 0 {
            await clock.sleep(until: clock.bootNow() + delay)
            guard generation == self.generation else { return .superseded }
            if Task.isCancelled { return .failed(.notSent("the daemon is stopping")) }
        }
        guard !isRetired else { return .failed(Self.retiredError) }
        // The sender's hold is read here too, not only when its observer's message arrives: a request it would
        // refuse must not count as a failure that widens the backoff windows.
        if let seconds = provider.impressionSink?.retryAfterHold?.remainingSeconds() {
            policy.holdRequests(until: clock.bootNow() + seconds, now: clock.bootNow())
            publish()
        }
        if let error = heldError() { return .failed(error) }
        policy.requestStarted(now: clock.bootNow())
        publish()
        let ticket = askForAnswer()
        let result = await provider.fetch(userId: userId)
        guard generation == self.generation else { return .superseded }
        // A reply that arrives after a reload (or shutdown) retired this refresher changes nothing.
        guard !isRetired else { return .failed(Self.retiredError) }
        // Done in the same actor turn as the update: a trigger that comes after this answer sends its own
        // request instead of sharing one that is no longer in flight (R10, R12).
        phase = .idle
        let now = clock.bootNow()
        switch result {
        case .success(let response):
            metrics.refreshed(trigger: trigger, outcome: response.partial ? "partial" : "complete", status: 200)
            policy.requestFinished(
                response.partial ? .partial : .complete, automatic: automatic, now: now, jitter: jitter())
            serve(response, asked: ticket)
            return .fetched
        case .failure(let error):
            metrics.refreshed(trigger: trigger, outcome: "failed", status: error.status)
            metrics.refreshFailed(kind: error.kind.rawValue)
            let retryAfter = error.retryAfterSeconds(now: clock.wallNow())
            policy.requestFinished(.failed, automatic: automatic, now: now, jitter: jitter(), retryAfter: retryAfter)
            if let until = policy.hold(now: now) {
                logger.warning(
                    "Pushwoosh asked to wait (Retry-After): no request before \(RefresherStatus.wallText(until, clock: clock))",
                    ["HTTP_STATUS": String(error.status), "PWFLAGS_EVENT": "retry-after"])
            }
            feed.failed(error, at: now, timers: timers(now: now))
            return .failed(error)
        }
    }

    /// Pushwoosh's `Retry-After` started or grew a hold, on whichever request's reply: the policy holds every
    /// trigger (without counting a failure), and status, explain and metrics show it.
    func senderHeld(seconds: Double) {
        guard !isRetired else { return }
        let now = clock.bootNow()
        policy.holdRequests(until: now + seconds, now: now)
        publish()
        wake()
    }

    /// The error a request gets while Pushwoosh's `Retry-After` holds requests back (F3): it says until when.
    func heldError() -> PushwooshError? {
        guard let until = policy.hold(now: clock.bootNow()) else { return nil }
        return .notSent(
            "Pushwoosh asked (Retry-After) that no request be sent before \(RefresherStatus.wallText(until, clock: clock))"
        )
    }

    static let retiredError = PushwooshError.notSent("the flag source was replaced or is stopping")

    /// The current session number (impressions are once per session).
    var session: Int { policy.session }

    // MARK: Internals

    /// A state write that failed, in `status.cacheError` until a cache write or removal succeeds.
    func noteStateError(_ reason: String) {
        feed.noteStateError(reason, at: clock.bootNow())
        publish()
    }

    /// Numbers an answer about to be asked for (`answersAsked`).
    func askForAnswer() -> Int {
        answersAsked += 1
        return answersAsked
    }

    /// Hands an answer to the feed, unless an answer asked for after it was served already; the status is
    /// published either way.
    func serve(_ response: FeatureFlagsResponse, asked ticket: Int) {
        guard ticket > answerServed else { return publish() }
        answerServed = ticket
        feed.received(response, userId: userId, expiry: expiry, timers: timers(now: clock.bootNow()))
    }

    /// Publishes the status as the policy stands now.
    func publish() {
        feed.publish(timers(now: clock.bootNow()))
    }

    /// The refresher's part of the status: the user, the app state, the session and the policy's times.
    private func timers(now: Double) -> RefresherStatus {
        RefresherStatus(
            userId: userId,
            fetchedAt: policy.fetchedAt,
            stale: policy.isStale(now: now),
            partial: policy.servesPartial,
            nextRefreshAt: provider.problem == nil ? policy.nextRefreshAt(now: now) : nil,
            heldUntil: policy.hold(now: now),
            foreground: policy.isForeground,
            sessionStartedAt: policy.sessionStartedAt,
            session: policy.session,
            problem: provider.problem
        )
    }

    /// When the flags served stop being served (R15), by the policy as it stands.
    var expiry: FlagExpiry {
        FlagExpiry(fetchedAt: policy.fetchedAt, maxAge: policy.settings.cacheMaxAge, clock: clock)
    }
}
