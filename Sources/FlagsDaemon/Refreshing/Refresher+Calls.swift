import FlagsCore
import PushwooshAPI

/// What clients ask of the refresher: `refresh`, `setUserId`, `setAppState`, `pushRegistered`, and a reload's
/// new timers or retirement.
extension Refresher {
    /// `refresh` (R10, R12, R16) by the refresh policy: a request, or the stored flags inside the throttle window.
    /// Returns whether the answer came from the network.
    ///
    /// A watched source (the local file) is read for this caller outside the policy (`readItself`).
    func refresh() async -> Result<Bool, PushwooshError> {
        if provider.isWatched { return await readItself().map { false } }
        if let problem = provider.problem { return .failure(.notSent(problem)) }
        if !policy.manualRefreshSendsRequest(now: clock.bootNow()) { return .success(false) }
        // F3: Pushwoosh's Retry-After holds every trigger; the caller learns until when at once.
        if let error = heldError() { return .failure(error) }
        switch await fetch(automatic: false) {
        case .fetched: return .success(true)
        case .failed(let error): return .failure(error)
        case .superseded: return .failure(.notSent("the user id changed while the request was in flight"))
        }
    }

    /// Reads a watched source for a caller (a `refresh`, the source's watch, the start) and serves what it read: a
    /// read that starts after the caller came, since sharing a read that began before could answer with what the
    /// file held before the caller changed it. Callers who come while a read runs share the one after it, which
    /// starts after all of them came.
    ///
    /// Each caller used to read the file on its own, and the answers waited for the actor holding their flags:
    /// 8,192 clients that sent `refresh` at once and hung up held 8,193 parsed copies of a 100-flag file
    /// (420 MB, drained in about 5 s at 1.5 cores). Shared, they hold a continuation each, and the file is read
    /// once per turn.
    func readItself() async -> Result<Void, PushwooshError> {
        guard !isRetired else { return .failure(Self.retiredError) }
        if readRunning { return await withCheckedContinuation { readWaiters.append($0) } }
        readRunning = true
        let result = await readAndServe()
        // This caller is answered now; the ones who came meanwhile get a read of their own, turn by turn.
        if readWaiters.isEmpty { readRunning = false } else { Task { await readForWaiters() } }
        return result
    }

    /// Reads for the callers waiting, each turn for those who came during the one before, until none waits.
    private func readForWaiters() async {
        while !readWaiters.isEmpty {
            let waiting = readWaiters
            readWaiters = []
            let result = await readAndServe()
            for waiter in waiting { waiter.resume(returning: result) }
        }
        readRunning = false
    }

    /// One read, off the actor, served on it: the flags travel to the feed once, whoever shares the read.
    private func readAndServe() async -> Result<Void, PushwooshError> {
        let ticket = askForAnswer()
        let result = await Self.read(provider, userId: userId)
        // A read that ends after a reload (or shutdown) retired this refresher changes nothing.
        guard !isRetired else { return .failure(Self.retiredError) }
        return result.map { serve($0, asked: ticket) }
    }

    /// Reads the source off the actor, so that a large file holds no other call.
    private nonisolated static func read(_ provider: any FlagProvider, userId: String) async -> Result<
        FeatureFlagsResponse, PushwooshError
    > {
        await provider.fetch(userId: userId)
    }

    /// `setUserId` (R8d): the previous user's flags are gone from memory and disk before this returns, and the
    /// previous user cannot come back after a restart: when the new user id cannot be written, its file is removed
    /// (which works on a full disk) so a restart starts from the default user, and when even that fails (a
    /// read-only directory) and a restart would bring the previous user back, the call fails and changes nothing.
    func setUserId(_ requested: String) -> Result<String, UserChangeRefused> {
        // The caller carries it out again on the stack that replaced this one.
        guard !isRetired else { return .success(userId) }
        let newUserId = requested.isEmpty ? defaultUserId : requested
        var afterRestart = newUserId
        var notKept: String?
        // The same user again (an app that sets it at every start, a script in a loop) writes nothing: the file
        // already says so.
        guard newUserId != userId || userIdFileHolds != requested else { return .success(userId) }
        do {
            userIdFileHolds = nil
            if requested.isEmpty {
                try stateDirectory.remove(Self.userIdFile)
            } else {
                try stateDirectory.writeAtomically(Self.userIdFile, Array(requested.utf8))
            }
            userIdFileHolds = requested
        } catch {
            let fallback = (try? stateDirectory.remove(Self.userIdFile)) != nil
            afterRestart = fallback ? defaultUserId : userId
            if afterRestart == userId, newUserId != userId {
                let refusal = UserChangeRefused(cause: error.description, userId: userId)
                logger.error(refusal.description, ["PWFLAGS_EVENT": "user-change-refused"])
                noteStateError(refusal.description)
                return .failure(refusal)
            }
            let reason =
                "cannot keep the user id in the state directory (\(error)); a restart starts as \(afterRestart)"
            logger.warning(reason, ["PWFLAGS_EVENT": "user-id-not-kept"])
            notKept = reason
        }
        guard newUserId != userId else {
            if let notKept { noteStateError(notKept) }
            return .success(userId)
        }
        userId = newUserId
        generation += 1
        if case .fetching(_, let task) = phase { task.cancel() }
        phase = .idle
        feed.userChanged(notKept: notKept)
        policy.userChanged(now: clock.bootNow())
        if policy.sessionStartedAt != nil { onSessionStart(policy.session) }
        logger.info("the user id changed; the previous user's flags are discarded", ["PWFLAGS_EVENT": "user-changed"])
        publish()
        wake()
        return .success(userId)
    }

    /// `setAppState` (`Lifecycle=client`, R8a): returns whether a session started.
    func setAppState(foreground: Bool) -> Bool {
        let before = policy
        let started = policy.appStateChanged(toForeground: foreground, now: clock.bootNow())
        if started { onSessionStart(policy.session) }
        publish()
        wakeIfChanged(from: before)
        return started
    }

    /// Wakes the loop when a call changed the policy. A call that changed nothing (the state it already has, a
    /// push registration already pending) leaves the loop asleep: a wake would only look at the policy again.
    /// (Each wake used to end the loop's sleep, whose timer the executor kept until its deadline; the `Alarm`
    /// now outlives wakes.)
    private func wakeIfChanged(from before: RefreshPolicy) {
        if policy != before { wake() }
    }

    /// `pushRegistered` (R8c) by the refresh policy: returns whether a refresh was started. A watched source has
    /// nothing to fetch: its changes are seen as they happen.
    func pushRegistered() -> Bool {
        guard provider.problem == nil, !provider.isWatched else { return false }
        let before = policy
        let started = policy.pushRegistered(now: clock.bootNow())
        publish()
        wakeIfChanged(from: before)
        return started
    }

    /// A reload changed the timers.
    func update(configuration: Configuration) {
        // Retired, it writes nothing: the expiry of what the next stack serves is that stack's.
        guard !isRetired else { return }
        policy.update(settings: Self.settings(configuration, provider: provider), now: clock.bootNow())
        publish()
        // A new `CacheMaxAge` moves the expiry of the flags served.
        feed.restamp(expiry)
        wake()
    }

    /// A reload replaced this refresher, or the daemon stops: cancels what is in flight (its callers get status
    /// 0, so that stopping never waits for a slow server), and from now on nothing is sent and nothing is written
    /// (store, disk cache, user id, the tally's `stale`), not even for a reply already on its way.
    func retire() {
        if case .fetching(_, let task) = phase { task.cancel() }
        phase = .retired
        feed.retire()
        wake()
    }
}

/// `setUserId` could not be made durable and a restart would bring the previous user back: nothing changed.
struct UserChangeRefused: Error, CustomStringConvertible {
    /// The failed write and removal.
    var cause: String
    /// The user that stays.
    var userId: String

    var description: String {
        "cannot change the user: the state directory cannot keep the new user id (\(cause)), so a restart would"
            + " bring back \(userId); the user stays \(userId)"
    }
}
