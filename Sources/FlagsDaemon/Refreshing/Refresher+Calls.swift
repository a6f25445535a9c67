import FlagsCore
import PushwooshAPI

/// What clients ask of the refresher: `refresh`, `setUserId`, `setAppState`, `pushRegistered`, and a reload's
/// new timers or retirement.
extension Refresher {
    /// `refresh` (R10, R12, R16) by the refresh policy: a request, or the stored flags inside the throttle window.
    /// Returns whether the answer came from the network. A source may answer `refresh` its own way
    /// (`FlagProvider.refresh`).
    func refresh() async -> Result<Bool, PushwooshError> {
        if let problem = source.problem { return .failure(.notSent(problem)) }
        if !policy.manualRefreshSendsRequest(now: clock.bootNow()) { return .success(false) }
        // F3: Pushwoosh's Retry-After holds every trigger; the caller learns until when at once.
        if let error = heldError() { return .failure(error) }
        switch await fetch(automatic: false) {
        case .fetched: return .success(true)
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
        expired = false
        source.userChanged()
        removeCache()
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

    /// `pushRegistered` (R8c) by the refresh policy: returns whether a refresh was started. A source may answer
    /// it its own way (`FlagProvider.pushRegistered`).
    func pushRegistered() -> Bool {
        guard source.problem == nil else { return false }
        let started = policy.pushRegistered(now: clock.bootNow())
        publish()
        wake()
        return started
    }

    /// A reload changed the timers.
    func update(configuration: Configuration) {
        policy.update(settings: source.settings(configuration), now: clock.bootNow())
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
}
