import FlagsCore
import TestSupport
import Testing

/// The refresh policy with a made-up clock: every rule of R7-R16 the policy decides, one test or more each.
///
/// Defaults (docs/configuration.md): CacheMaxAge 24 h, RefreshInterval 1 h, SessionTimeout 30 min, SessionMaxAge 24 h,
/// RefreshThrottle 5 min, RetryBackoff 30 s. Times are boot-clock seconds (CLOCK_BOOTTIME, which counts through
/// suspend and never jumps); `t0` is an arbitrary start.
@Suite(.hangLimit) struct RefreshPolicyTests {
    let t0 = 1_800_000_000.0
    let hour = 3600.0
    let day = 86400.0

    /// A policy with the default settings but the SDK's timing (no fleet spread, which `FleetSpreadTests`
    /// covers), changed by `edit`.
    func makePolicy(_ edit: (inout Configuration) -> Void = { _ in }) -> RefreshPolicy {
        var configuration = Configuration()
        configuration.refreshSpread = .zero
        configuration.sessionStartDelay = .zero
        edit(&configuration)
        return RefreshPolicy(settings: RefreshPolicy.Settings(configuration))
    }

    /// A foreground policy started without a cache whose session-start request ended at `at` with `outcome`.
    func fetchedPolicy(
        at time: Double, outcome: RefreshPolicy.Outcome = .complete, _ edit: (inout Configuration) -> Void = { _ in }
    ) -> RefreshPolicy {
        var policy = makePolicy(edit)
        policy.start(now: time, cachedFetchedAt: nil)
        policy.requestStarted(now: time)
        policy.requestFinished(outcome, automatic: true, now: time, jitter: 0.5)
        return policy
    }

    /// A `Lifecycle=client` policy whose app came to the foreground at `time`, and whose session-start request
    /// completed then.
    func foregroundClientPolicy(fetchedAt time: Double) -> RefreshPolicy {
        var policy = makePolicy { $0.lifecycle = .client }
        policy.start(now: time, cachedFetchedAt: nil)
        policy.appStateChanged(toForeground: true, now: time)
        policy.requestStarted(now: time)
        policy.requestFinished(.complete, automatic: true, now: time, jitter: 0.5)
        return policy
    }

    // MARK: R7

    @Test("R7: a usable disk cache is served from the start, with its fetch time")
    func r7StartsWithTheCachedFetchTime() {
        var policy = makePolicy()
        policy.start(now: t0, cachedFetchedAt: t0 - 100)
        #expect(policy.fetchedAt == t0 - 100)
        #expect(policy.hasValidFlags(now: t0))
        #expect(!policy.servesPartial)
    }

    @Test("R7: without a cache there are no valid flags and a refresh sends a request")
    func r7StartsWithoutCache() {
        var policy = makePolicy()
        policy.start(now: t0, cachedFetchedAt: nil)
        #expect(policy.fetchedAt == nil)
        #expect(!policy.hasValidFlags(now: t0))
        #expect(policy.manualRefreshSendsRequest(now: t0))
    }

    @Test("R7: cached flags stop being valid CacheMaxAge after their fetch, not after the start")
    func r7CacheAgeCountsFromTheFetch() {
        var policy = makePolicy()
        policy.start(now: t0, cachedFetchedAt: t0 - day + 10)
        #expect(policy.hasValidFlags(now: t0 + 9))
        #expect(!policy.hasValidFlags(now: t0 + 10))
        let due = policy.due(now: t0 + 10)
        #expect(due.expireFlags)
    }

    @Test("R7, R10: the throttle window of a cached complete response counts from its fetch time")
    func r7CachedFetchOpensTheThrottleWindow() {
        var policy = makePolicy()
        policy.start(now: t0, cachedFetchedAt: t0 - 100)
        #expect(!policy.manualRefreshSendsRequest(now: t0))
        #expect(policy.manualRefreshSendsRequest(now: t0 + 200))
    }

    // MARK: R8a

    @Test("R8a: Lifecycle=foreground starts a session, and its refresh, when the daemon starts")
    func r8aForegroundSessionAtStart() {
        var policy = makePolicy()
        policy.start(now: t0, cachedFetchedAt: t0 - 10)
        #expect(policy.isForeground)
        #expect(policy.session == 1)
        #expect(policy.sessionStartedAt == t0)
        let due = policy.due(now: t0)
        #expect(due.refresh == [.sessionStart])
    }

    @Test("R8a: Lifecycle=foreground starts a new session after SessionMaxAge, not before")
    func r8aForegroundSessionMaxAge() {
        var policy = fetchedPolicy(at: t0)
        // Keep the interval refreshes out of the way: they complete as they come.
        let before = policy.due(now: t0 + day - 1)
        #expect(!before.sessionStarted)
        policy.requestStarted(now: t0 + day - 1)
        policy.requestFinished(.complete, automatic: true, now: t0 + day - 1, jitter: 0.5)
        let due = policy.due(now: t0 + day)
        #expect(due.sessionStarted)
        #expect(due.refresh.contains(.sessionStart))
        #expect(policy.session == 2)
        #expect(policy.sessionStartedAt == t0 + day)
    }

    @Test("R8a: Lifecycle=foreground ignores setAppState")
    func r8aForegroundIgnoresAppState() {
        var policy = makePolicy()
        policy.start(now: t0, cachedFetchedAt: nil)
        let sessionStarted = policy.appStateChanged(toForeground: false, now: t0 + 1)
        #expect(!sessionStarted)
        #expect(policy.isForeground)
        let sessionStarted2 = policy.appStateChanged(toForeground: true, now: t0 + 2 * hour)
        #expect(!sessionStarted2)
        #expect(policy.session == 1)
    }

    @Test("R8a: Lifecycle=client starts in the background, with no session and no refresh")
    func r8aClientStartsInBackground() {
        var policy = makePolicy { $0.lifecycle = .client }
        policy.start(now: t0, cachedFetchedAt: nil)
        #expect(!policy.isForeground)
        #expect(policy.session == 0)
        #expect(policy.sessionStartedAt == nil)
        let due = policy.due(now: t0)
        #expect(due.refresh.isEmpty)
        #expect(policy.nextRefreshAt(now: t0) == nil)
    }

    @Test("R8a: the first foreground starts a session")
    func r8aFirstForegroundStartsSession() {
        var policy = makePolicy { $0.lifecycle = .client }
        policy.start(now: t0, cachedFetchedAt: nil)
        let sessionStarted = policy.appStateChanged(toForeground: true, now: t0 + 5)
        #expect(sessionStarted)
        #expect(policy.isForeground)
        #expect(policy.session == 1)
        #expect(policy.sessionStartedAt == t0 + 5)
        let due = policy.due(now: t0 + 5)
        #expect(due.refresh == [.sessionStart])
    }

    @Test("R8a: a background shorter than SessionTimeout does not start a session")
    func r8aShortBackgroundKeepsSession() {
        var policy = foregroundClientPolicy(fetchedAt: t0)
        let sessionStarted = policy.appStateChanged(toForeground: false, now: t0 + 10)
        #expect(!sessionStarted)
        #expect(!policy.isForeground)
        let sessionStarted2 = policy.appStateChanged(toForeground: true, now: t0 + 10 + 1799)
        #expect(!sessionStarted2)
        #expect(policy.session == 1)
        let due = policy.due(now: t0 + 10 + 1799)
        #expect(due.refresh.isEmpty)
    }

    @Test("R8a: a session starts when the app comes back after SessionTimeout")
    func r8aLongBackgroundStartsSession() {
        var policy = foregroundClientPolicy(fetchedAt: t0)
        policy.appStateChanged(toForeground: false, now: t0 + 10)
        let sessionStarted = policy.appStateChanged(toForeground: true, now: t0 + 10 + 1800)
        #expect(sessionStarted)
        #expect(policy.session == 2)
        let due = policy.due(now: t0 + 10 + 1800)
        #expect(due.refresh.contains(.sessionStart))
    }

    @Test("R8a: a repeated background report does not move the start of the background")
    func r8aRepeatedBackgroundKeepsItsStart() {
        var policy = makePolicy { $0.lifecycle = .client }
        policy.start(now: t0, cachedFetchedAt: nil)
        policy.appStateChanged(toForeground: true, now: t0)
        policy.appStateChanged(toForeground: false, now: t0 + 10)
        policy.appStateChanged(toForeground: false, now: t0 + 1000)
        let sessionStarted = policy.appStateChanged(toForeground: true, now: t0 + 10 + 1800)
        #expect(sessionStarted)
    }

    // MARK: R8b

    @Test("R8b: Lifecycle=foreground refreshes every RefreshInterval after the last complete fetch")
    func r8bIntervalInForeground() {
        var policy = fetchedPolicy(at: t0)
        let due = policy.due(now: t0 + hour - 1)
        #expect(due.refresh.isEmpty)
        #expect(policy.nextRefreshAt(now: t0 + 1) == t0 + hour)
        let due2 = policy.due(now: t0 + hour)
        #expect(due2.refresh == [.interval])
    }

    @Test("R8b: Lifecycle=client refreshes on the interval in the foreground only")
    func r8bIntervalOnlyInForeground() {
        var policy = foregroundClientPolicy(fetchedAt: t0)
        let due = policy.due(now: t0 + hour)
        #expect(due.refresh == [.interval])
        policy.appStateChanged(toForeground: false, now: t0 + hour + 1)
        let due2 = policy.due(now: t0 + 2 * hour)
        #expect(due2.refresh.isEmpty)
        #expect(policy.nextRefreshAt(now: t0 + 2 * hour) == nil)
    }

    // MARK: R8c

    @Test("R8c: registering for push after the last request asks for a refresh")
    func r8cPushRegisteredTriggersRefresh() {
        var policy = fetchedPolicy(at: t0)
        let refreshAsked = policy.pushRegistered(now: t0 + 5)
        #expect(refreshAsked)
        let due = policy.due(now: t0 + 5)
        #expect(due.refresh == [.pushRegistered])
        #expect(policy.nextRefreshAt(now: t0 + 5) == t0 + 5)
        policy.requestStarted(now: t0 + 5)
        #expect(policy.pending.isEmpty)
    }

    @Test("R8c: a push registration is refreshed in the background too")
    func r8cPushRegisteredInBackground() {
        var policy = makePolicy { $0.lifecycle = .client }
        policy.start(now: t0, cachedFetchedAt: nil)
        let refreshAsked = policy.pushRegistered(now: t0 + 1)
        #expect(refreshAsked)
        let due = policy.due(now: t0 + 1)
        #expect(due.refresh == [.pushRegistered])
    }

    @Test("R8c: a registration while a request is in flight asks for another request after it")
    func r8cPushRegisteredDuringRequest() {
        var policy = fetchedPolicy(at: t0)
        policy.requestStarted(now: t0 + 10)
        let refreshAsked = policy.pushRegistered(now: t0 + 11)
        #expect(refreshAsked)
        policy.requestFinished(.complete, automatic: true, now: t0 + 12, jitter: 0.5)
        let due = policy.due(now: t0 + 12)
        #expect(due.refresh == [.pushRegistered])
    }

    // MARK: R8d

    @Test("R8d: a user change clears the flags and the throttle window, and asks for a request at once")
    func r8dUserChangedClearsFlags() {
        var policy = fetchedPolicy(at: t0)
        policy.userChanged(now: t0 + 5)
        #expect(policy.fetchedAt == nil)
        #expect(policy.lastCompleteAt == nil)
        #expect(!policy.hasValidFlags(now: t0 + 5))
        #expect(policy.manualRefreshSendsRequest(now: t0 + 5))
        let due = policy.due(now: t0 + 5)
        #expect(due.refresh.contains(.userChanged))
    }

    @Test("R8d: a user change starts a new session in the foreground")
    func r8dUserChangedStartsSession() {
        var policy = fetchedPolicy(at: t0)
        policy.userChanged(now: t0 + 5)
        #expect(policy.session == 2)
        #expect(policy.sessionStartedAt == t0 + 5)
    }

    @Test("R8d: a user change in the background refreshes, and the next foreground starts a session")
    func r8dUserChangedInBackground() {
        var policy = makePolicy { $0.lifecycle = .client }
        policy.start(now: t0, cachedFetchedAt: nil)
        policy.appStateChanged(toForeground: true, now: t0)
        policy.appStateChanged(toForeground: false, now: t0 + 10)
        policy.userChanged(now: t0 + 20)
        #expect(policy.sessionStartedAt == nil)
        let due = policy.due(now: t0 + 20)
        #expect(due.refresh == [.userChanged])
        policy.requestStarted(now: t0 + 20)
        let sessionStarted = policy.appStateChanged(toForeground: true, now: t0 + 30)
        #expect(sessionStarted)
        #expect(policy.session == 2)
    }

    @Test("R8d: a user change forgets the previous user's retries")
    func r8dUserChangedResetsRetries() {
        var policy = fetchedPolicy(at: t0)
        policy.requestStarted(now: t0 + hour)
        policy.requestFinished(.failed, automatic: true, now: t0 + hour, jitter: 0.5)
        #expect(policy.retryAt != nil)
        policy.userChanged(now: t0 + hour + 1)
        #expect(policy.retryAt == nil)
        #expect(policy.failures == 0)
    }

    // MARK: R10, R12

    @Test("R10: inside RefreshThrottle after a complete fetch a refresh is answered from the stored flags")
    func r10ThrottleWindow() {
        let policy = fetchedPolicy(at: t0)
        #expect(!policy.manualRefreshSendsRequest(now: t0))
        #expect(!policy.manualRefreshSendsRequest(now: t0 + 299))
        #expect(policy.manualRefreshSendsRequest(now: t0 + 300))
    }

    @Test("R10: without valid flags a refresh always sends a request")
    func r10NoValidFlagsSendsRequest() {
        var policy = fetchedPolicy(at: t0) { $0.refreshThrottle = .seconds(2 * 86400) }
        #expect(!policy.manualRefreshSendsRequest(now: t0 + 10))
        _ = policy.due(now: t0 + day)
        #expect(policy.manualRefreshSendsRequest(now: t0 + day))
    }

    @Test("R10: a failed refresh does not open the throttle window")
    func r10FailureDoesNotOpenWindow() {
        var policy = makePolicy()
        policy.start(now: t0, cachedFetchedAt: nil)
        policy.requestStarted(now: t0)
        policy.requestFinished(.failed, automatic: false, now: t0, jitter: 0.5)
        #expect(policy.manualRefreshSendsRequest(now: t0 + 1))
    }

    @Test("R12: DisableThrottle sends a request every time")
    func r12DisableThrottle() {
        let policy = fetchedPolicy(at: t0) { $0.disableThrottle = true }
        #expect(policy.manualRefreshSendsRequest(now: t0))
        #expect(policy.manualRefreshSendsRequest(now: t0 + 1))
    }

    // MARK: R13

    @Test("R13: a partial response is served but does not open the throttle window")
    func r13PartialDoesNotOpenWindow() {
        let policy = fetchedPolicy(at: t0, outcome: .partial)
        #expect(policy.servesPartial)
        #expect(policy.hasValidFlags(now: t0 + 1))
        #expect(policy.lastCompleteAt == nil)
        #expect(policy.manualRefreshSendsRequest(now: t0 + 1))
    }

    @Test("R13: a partial response after a complete one still lets the next refresh through")
    func r13PartialAfterComplete() {
        var policy = fetchedPolicy(at: t0)
        policy.requestStarted(now: t0 + 400)
        policy.requestFinished(.partial, automatic: false, now: t0 + 400, jitter: 0.5)
        #expect(policy.manualRefreshSendsRequest(now: t0 + 401))
        policy.requestStarted(now: t0 + 401)
        policy.requestFinished(.complete, automatic: false, now: t0 + 402, jitter: 0.5)
        #expect(!policy.servesPartial)
        #expect(!policy.manualRefreshSendsRequest(now: t0 + 403))
    }

    @Test("R13: a partial response schedules a retry within RetryBackoff (full jitter), without counting a failure")
    func r13PartialSchedulesRetry() {
        var policy = fetchedPolicy(at: t0, outcome: .partial)
        #expect(policy.retryAt == t0 + 15)
        #expect(policy.failures == 0)
        let due = policy.due(now: t0 + 14)
        #expect(due.refresh.isEmpty)
        let due2 = policy.due(now: t0 + 15)
        #expect(due2.refresh == [.retry])
    }

    // MARK: R15

    @Test("R15: flags expire at CacheMaxAge: due says so once and nothing is valid after")
    func r15ExpiryAtCacheMaxAge() {
        var policy = fetchedPolicy(at: t0) { $0.refreshInterval = .seconds(2 * 86400) }
        let due = policy.due(now: t0 + day - 1)
        #expect(!due.expireFlags)
        #expect(policy.hasValidFlags(now: t0 + day - 1))
        let due2 = policy.due(now: t0 + day)
        #expect(due2.expireFlags)
        #expect(policy.fetchedAt == nil)
        #expect(!policy.hasValidFlags(now: t0 + day))
        let due3 = policy.due(now: t0 + day + 1)
        #expect(!due3.expireFlags)
    }

    @Test("R15: failing refreshes do not extend the life of the stored flags")
    func r15FailuresDoNotExtend() {
        var policy = fetchedPolicy(at: t0)
        var now = t0 + hour
        while now < t0 + day {
            policy.requestStarted(now: now)
            policy.requestFinished(.failed, automatic: true, now: now, jitter: 0.5)
            now = policy.retryAt ?? (t0 + day)
        }
        let due = policy.due(now: t0 + day)
        #expect(due.expireFlags)
    }

    @Test("R15: a partial response expires at CacheMaxAge as well")
    func r15PartialExpires() {
        var policy = makePolicy { $0.cacheMaxAge = .seconds(10) }
        policy.start(now: t0, cachedFetchedAt: nil)
        policy.requestStarted(now: t0)
        policy.requestFinished(.partial, automatic: true, now: t0, jitter: 0.5)
        let due = policy.due(now: t0 + 10)
        #expect(due.expireFlags)
        #expect(!policy.servesPartial)
    }

    // MARK: Retries

    @Test("Retries: the backoff doubles from RetryBackoff up to RefreshInterval")
    func retriesDoubleUpToInterval() {
        var policy = fetchedPolicy(at: t0)
        var now = t0 + hour
        var waits: [Double] = []
        for _ in 0..<10 {
            policy.requestStarted(now: now)
            policy.requestFinished(.failed, automatic: true, now: now, jitter: 0.5)
            let retryAt = policy.retryAt ?? now
            waits.append(retryAt - now)
            now = retryAt
        }
        // Windows of 30, 60, 120, … capped at 3600, each starting where the last ended; a draw of 0.5 puts
        // every retry in the middle of its window: 15, then 30 + 30, 90 + 60, 210 + 120, …
        #expect(waits == [15, 45, 90, 180, 360, 720, 1440, 2760, 3600, 3600])
        #expect(policy.failures == 10)
    }

    @Test("Retries: a retry is due at retryAt and suppresses the interval trigger")
    func retriesAreDue() {
        var policy = fetchedPolicy(at: t0)
        policy.requestStarted(now: t0 + hour)
        policy.requestFinished(.failed, automatic: true, now: t0 + hour, jitter: 0.5)
        let due = policy.due(now: t0 + hour + 14)
        #expect(due.refresh.isEmpty)
        #expect(policy.nextRefreshAt(now: t0 + hour + 1) == t0 + hour + 15)
        let due2 = policy.due(now: t0 + hour + 15)
        #expect(due2.refresh == [.retry])
    }

    @Test(
        "Retries: full jitter draws the wait between 0 and the backoff (F3)",
        arguments: [(0.0, 0.0), (0.5, 15.0), (0.999, 29.97), (-3.0, 0.0), (7.0, 30.0), (Double.nan, 0.0)]
    )
    func retriesJitter(jitter: Double, expectedWait: Double) throws {
        var policy = fetchedPolicy(at: t0)
        policy.requestStarted(now: t0 + hour)
        policy.requestFinished(.failed, automatic: true, now: t0 + hour, jitter: jitter)
        let retryAt = try #require(policy.retryAt)
        let wait = retryAt - (t0 + hour)
        #expect(abs(wait - expectedWait) < 1e-6)
        #expect(wait >= 0 && wait <= 30)
    }

    @Test(
        "Retries: one retry per backoff window whatever the draws, so a 2 h outage costs a device at most 9 requests",
        arguments: [[0.0], [0.999], [0.999, 0.0], [0.0, 0.999], [0.3, 0.9, 0.05, 0.7]]
    )
    func retriesOnePerWindow(draws: [Double]) {
        var policy = fetchedPolicy(at: t0)
        let outageStart = t0 + hour
        var now = outageStart
        var sent = 0
        // The windows: [0, 30), [30, 90), [90, 210), … after the first failure, the last ones 3600 wide.
        var windowStarts: [Double] = [0]
        var width = 30.0
        while windowStarts.last! < 2 * hour {
            windowStarts.append(windowStarts.last! + width)
            width = min(width * 2, hour)
        }
        var retryTimes: [Double] = []
        while now < outageStart + 2 * hour {
            policy.requestStarted(now: now)
            sent += 1
            policy.requestFinished(.failed, automatic: true, now: now, jitter: draws[sent % draws.count])
            now = policy.retryAt ?? .infinity
            if now < outageStart + 2 * hour { retryTimes.append(now - outageStart) }
        }
        #expect(sent <= 9)
        // No two retries share a window.
        let windows = retryTimes.map { time in windowStarts.lastIndex { $0 <= time } ?? 0 }
        #expect(Set(windows).count == windows.count, "retries at \(retryTimes)")
    }

    @Test("Retries: a failed refresh a caller asked for schedules no retry")
    func retriesNotForManualFailures() {
        var policy = fetchedPolicy(at: t0)
        policy.requestStarted(now: t0 + 400)
        policy.requestFinished(.failed, automatic: false, now: t0 + 400, jitter: 0.5)
        #expect(policy.retryAt == nil)
        #expect(policy.failures == 0)
        #expect(policy.fetchedAt == t0)
        #expect(policy.nextRefreshAt(now: t0 + 401) == t0 + hour)
    }

    @Test("Retries: a success resets the backoff")
    func retriesResetOnSuccess() {
        var policy = fetchedPolicy(at: t0)
        for step in 0..<3 {
            let now = t0 + hour + Double(step) * 1000
            policy.requestStarted(now: now)
            policy.requestFinished(.failed, automatic: true, now: now, jitter: 0.5)
        }
        #expect(policy.failures == 3)
        let now = t0 + 2 * hour
        policy.requestStarted(now: now)
        policy.requestFinished(.complete, automatic: true, now: now, jitter: 0.5)
        #expect(policy.failures == 0)
        #expect(policy.retryAt == nil)
        policy.requestStarted(now: now + hour)
        policy.requestFinished(.failed, automatic: true, now: now + hour, jitter: 0.5)
        #expect(policy.retryAt == now + hour + 15)
    }

    // MARK: isStale

    @Test("isStale: flags older than RefreshInterval because automatic refreshes fail")
    func staleWhenRefreshesFail() {
        var policy = fetchedPolicy(at: t0)
        #expect(!policy.isStale(now: t0 + 2 * hour))
        policy.requestStarted(now: t0 + hour)
        policy.requestFinished(.failed, automatic: true, now: t0 + hour, jitter: 0.5)
        #expect(!policy.isStale(now: t0 + hour))
        #expect(policy.isStale(now: t0 + hour + 1))
        policy.requestStarted(now: t0 + hour + 30)
        policy.requestFinished(.complete, automatic: true, now: t0 + hour + 30, jitter: 0.5)
        #expect(!policy.isStale(now: t0 + hour + 31))
    }

    @Test("isStale: no flags are never stale")
    func staleNeedsFlags() {
        let policy = fetchedPolicy(at: t0, outcome: .failed)
        #expect(!policy.isStale(now: t0 + 2 * hour))
    }

    // MARK: nextWake

    @Test("nextWake: a pending trigger is due now")
    func nextWakePending() {
        var policy = makePolicy()
        policy.start(now: t0, cachedFetchedAt: nil)
        #expect(policy.nextWake(now: t0) == t0)
    }

    @Test("nextWake: the earliest of the next refresh, the end of the session and the cache's expiry")
    func nextWakeEarliest() {
        let policy = fetchedPolicy(at: t0)
        #expect(policy.nextWake(now: t0 + 1) == t0 + hour)
        let shortCache = fetchedPolicy(at: t0) { $0.cacheMaxAge = .seconds(600) }
        #expect(shortCache.nextWake(now: t0 + 1) == t0 + 600)
        let shortSession = fetchedPolicy(at: t0) { $0.sessionMaxAge = .seconds(60) }
        #expect(shortSession.nextWake(now: t0 + 1) == t0 + 60)
    }

    @Test("nextWake: in the background only the cache's expiry wakes the daemon")
    func nextWakeInBackground() {
        var policy = makePolicy { $0.lifecycle = .client }
        policy.start(now: t0, cachedFetchedAt: nil)
        #expect(policy.nextWake(now: t0) == nil)
        var cached = makePolicy { $0.lifecycle = .client }
        cached.start(now: t0, cachedFetchedAt: t0 - 100)
        #expect(cached.nextWake(now: t0) == t0 - 100 + day)
    }

    @Test("nextWake: a session start left pending by a quick return to the background does not wake at once")
    func nextWakeDoesNotSpinInBackground() {
        var policy = makePolicy { $0.lifecycle = .client }
        policy.start(now: t0, cachedFetchedAt: nil)
        policy.appStateChanged(toForeground: true, now: t0)
        policy.appStateChanged(toForeground: false, now: t0)
        let due = policy.due(now: t0 + 1)
        #expect(due.refresh.isEmpty)
        // Nothing is due, so waking now would make the refresher loop spin until the next foreground.
        let wake = policy.nextWake(now: t0 + 1)
        #expect(wake.map { $0 > t0 + 1 } ?? true)
        // The session's refresh is not lost: it goes out with the next foreground.
        policy.appStateChanged(toForeground: true, now: t0 + 2)
        let due2 = policy.due(now: t0 + 2)
        #expect(due2.refresh.contains(.sessionStart))
    }

    @Test("nextWake: whenever nextWake says now, due finds something to do")
    func nextWakeMatchesDue() {
        var policy = foregroundClientPolicy(fetchedAt: t0)
        policy.appStateChanged(toForeground: false, now: t0 + 1)
        for now in stride(from: t0 + 1, through: t0 + 2 * day, by: 997) {
            var copy = policy
            guard let wake = copy.nextWake(now: now), wake <= now else { continue }
            let due = copy.due(now: now)
            #expect(due.expireFlags || due.sessionStarted || !due.refresh.isEmpty, "idle wake at \(now - t0)")
        }
    }

    // MARK: Requests counted, callers spaced, the boot clock

    @Test(
        "R10: while the stored flags are valid a failed request opens the window too: one request per RefreshThrottle")
    func r10FailedRequestsCount() {
        var policy = fetchedPolicy(at: t0)
        let later = t0 + 400
        #expect(policy.manualRefreshSendsRequest(now: later))
        policy.requestStarted(now: later)
        policy.requestFinished(.failed, automatic: false, now: later + 1, jitter: 0.5)
        #expect(!policy.manualRefreshSendsRequest(now: later + 1))
        #expect(!policy.manualRefreshSendsRequest(now: later + 299))
        #expect(policy.manualRefreshSendsRequest(now: later + 300))
        // An automatic request counts as well: R10 counts requests sent.
        policy.requestStarted(now: later + 300)
        policy.requestFinished(.failed, automatic: true, now: later + 301, jitter: 0.5)
        #expect(!policy.manualRefreshSendsRequest(now: later + 302))
    }

    @Test("R10, R13: a request sent while a partial response is served does not throttle the next refresh")
    func r10PartialStillAsksAgain() {
        var policy = fetchedPolicy(at: t0, outcome: .partial)
        policy.requestStarted(now: t0 + 2)
        policy.requestFinished(.failed, automatic: false, now: t0 + 2, jitter: 0.5)
        #expect(policy.manualRefreshSendsRequest(now: t0 + 3))
    }

    @Test("Requests a caller prompts go at least a second after the previous request")
    func callerRequestsAreSpaced() {
        var policy = makePolicy()
        policy.start(now: t0, cachedFetchedAt: nil)
        policy.requestStarted(now: t0)
        policy.requestFinished(.failed, automatic: true, now: t0 + 0.1, jitter: 0.5)
        #expect(policy.earliestCallerRequest(now: t0 + 0.2) == t0 + 1)
        #expect(policy.earliestCallerRequest(now: t0 + 5) == t0 + 5)
        policy.userChanged(now: t0 + 0.2)
        #expect(policy.due(now: t0 + 0.2).refresh.isEmpty)
        #expect(policy.nextRefreshAt(now: t0 + 0.2) == t0 + 1)
        #expect(policy.nextWake(now: t0 + 0.2) == t0 + 1)
        #expect(policy.due(now: t0 + 1).refresh.contains(.userChanged))
    }

    @Test("Any loop of control calls sends about one request a second, and the last user is asked for within one")
    func controlCallLoopIsBounded() {
        var policy = makePolicy()
        policy.start(now: t0, cachedFetchedAt: t0 - 10)
        var sent: [Double] = []
        var lastUserChange = t0
        // 20 calls a second for 10 s: user changes, push registrations, refreshes, in turn.
        for step in 0..<200 {
            let now = t0 + Double(step) * 0.05
            switch step % 3 {
            case 0:
                policy.userChanged(now: now)
                lastUserChange = now
            case 1: policy.pushRegistered(now: now)
            default:
                if policy.manualRefreshSendsRequest(now: now), policy.earliestCallerRequest(now: now) <= now {
                    policy.requestStarted(now: now)
                    sent.append(now)
                    policy.requestFinished(.failed, automatic: false, now: now, jitter: 0.5)
                }
            }
            if !policy.due(now: now).refresh.isEmpty {
                policy.requestStarted(now: now)
                sent.append(now)
                policy.requestFinished(.failed, automatic: true, now: now, jitter: 0.5)
            }
        }
        #expect(sent.count <= 11, "\(sent.count) requests in 10 s")
        #expect(zip(sent.dropFirst(), sent).allSatisfy { $0 - $1 >= 1 - 1e-9 })
        // After the loop, the last user's request is due within a second of the change.
        let due = policy.nextRefreshAt(now: t0 + 10)
        #expect(due.map { $0 <= lastUserChange + 1 } ?? false || sent.last.map { $0 >= lastUserChange } ?? false)
    }

    @Test("Suspend: a boot-clock jump past CacheMaxAge and SessionMaxAge expires, starts a session and refreshes")
    func suspendIsABootClockJump() {
        var policy = fetchedPolicy(at: t0)
        let resumed = t0 + day + hour
        let due = policy.due(now: resumed)
        #expect(due.expireFlags)
        #expect(due.sessionStarted)
        #expect(due.refresh.contains(.sessionStart))
        #expect(!policy.hasValidFlags(now: resumed))
        #expect(policy.manualRefreshSendsRequest(now: resumed))
    }

    @Test("A provisional cache whose age became known counts from the earlier fetch, never from a later one")
    func cacheAgeKnownOnlyMovesTheFetchBack() {
        var policy = makePolicy()
        policy.start(now: t0, cachedFetchedAt: t0)
        policy.cacheAgeKnown(fetchedAt: t0 + 100)
        #expect(policy.fetchedAt == t0)
        policy.cacheAgeKnown(fetchedAt: t0 - day + 5)
        #expect(policy.fetchedAt == t0 - day + 5)
        #expect(policy.due(now: t0 + 5).expireFlags)
    }
}
