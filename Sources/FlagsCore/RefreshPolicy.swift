/// When to ask Pushwoosh for flags (R8, R10, R12, R13, R15) and when sessions start: a pure state machine.
///
/// Time comes in as a parameter, in seconds on the boot clock (`CLOCK_BOOTTIME`: it keeps counting through
/// suspend and never jumps when the wall clock is set), so every interval it measures (RefreshInterval,
/// RefreshThrottle, SessionTimeout, SessionMaxAge, RetryBackoff, the flags' age against CacheMaxAge) is immune
/// to wall-clock changes, and every rule can be tested with a made-up clock. A disk cache's fetch time is
/// turned into this clock by the refresher before it gets here (`CacheAge`). The refresher feeds the policy
/// events, asks `due(now:)` what to do, and sleeps until `nextWake(now:)`.
///
/// Besides R10's throttle, requests that callers prompt (`refresh`, `pushRegistered`, `setUserId`,
/// `setAppState`) go at least `callerSpacing` after the previous request, so that no loop of local calls sends
/// more than about one request a second; such triggers wait and share the one request that then goes.
///
/// A fleet is not a herd (F1-F3): each device has a stable `phase` in [0, 1) (from its HWID). Interval refreshes
/// land on the device's slots, `phase × RefreshSpread` past every multiple of `RefreshSpread` on the boot clock,
/// so devices powered on together spread over the spread; a session start with usable flags waits for the next
/// slot (at most `SessionStartDelay`); Pushwoosh's `Retry-After` holds every request back; retries use full
/// jitter. Randomness comes in as parameters, so the fleet simulator and the tests drive this very type.
public struct RefreshPolicy: Sendable, Equatable {
    /// Why an automatic refresh is due.
    public enum Trigger: String, Sendable, Equatable, CaseIterable {
        /// R8a: a session started.
        case sessionStart
        /// R8b: `RefreshInterval` passed in the foreground.
        case interval
        /// R8c: the device registered for push after the last request.
        case pushRegistered
        /// R8d: the user id changed.
        case userChanged
        /// A failed automatic refresh or a partial response is tried again.
        case retry

        var bit: UInt8 {
            switch self {
            case .sessionStart: 1
            case .interval: 2
            case .pushRegistered: 4
            case .userChanged: 8
            case .retry: 16
            }
        }
    }

    /// The outcome of a request, as the policy needs it.
    public enum Outcome: Sendable, Equatable {
        case complete
        /// R13: served, not stored, does not open the throttle window.
        case partial
        case failed
    }

    /// One request a second at most for what callers prompt: Pushwoosh is protected from any local loop, and a
    /// user change still reaches it within a second.
    public static let callerSpacing = 1.0

    public var settings: Settings
    /// The device's place in [0, 1) on the slot grid (F1), stable across restarts: see `phase(forDevice:)`.
    public let phase: Double

    /// `foreground` or `background`; always foreground with `Lifecycle=foreground`.
    public private(set) var isForeground: Bool
    /// Counts sessions; impressions are once per session (R18).
    public private(set) var session = 0
    public private(set) var sessionStartedAt: Double?
    private var backgroundSince: Double?
    /// When the flags served were fetched; nil when there are none.
    public private(set) var fetchedAt: Double?
    /// True when the flags served came from a partial response.
    public private(set) var servesPartial = false
    /// The last complete response: the start of the R10 throttle window.
    public private(set) var lastCompleteAt: Double?
    /// When the request that brought `lastCompleteAt`'s response was sent: the interval counts from there, so
    /// that a reply's latency does not push a device past its slot into the next one.
    private(set) var lastCompleteSentAt: Double?
    public private(set) var lastRequestSentAt: Double?
    /// The last request sent while valid, complete flags were served: R10 counts requests sent, failed or not.
    private var lastThrottledRequestAt: Double?
    /// The retries and Pushwoosh's hold: the arithmetic of what a request's outcome does to the timing.
    private var backoff = RefreshBackoff()
    /// Automatic refreshes that failed in a row.
    public var failures: Int { backoff.failures }
    /// When the next retry goes (a failed automatic refresh, a partial response); nil when none is planned.
    public var retryAt: Double? { backoff.retryAt }
    /// Triggers waiting for the next request.
    public var pending: Set<Trigger> { Self.triggers(pendingBits) }
    /// `pending` as bits (`Trigger.bit`): asked on every wake, so kept without hashing or allocating.
    private var pendingBits: UInt8 = 0
    /// A pending session start is not due before this (F2): the stored flags are served meanwhile.
    public private(set) var sessionStartDueAt: Double?
    /// Pushwoosh asked (429 or 5xx with `Retry-After`) that nothing be sent before this (F3).
    public var heldUntil: Double? { backoff.heldUntil }

    public init(settings: Settings, phase: Double = 0) {
        self.settings = settings
        self.phase = phase.isFinite ? min(max(phase, 0), 0.999_999_999) : 0
        self.isForeground = settings.lifecycle == .foreground
    }

    // MARK: Events

    /// The daemon starts, with the fetch time of a usable disk cache if there is one.
    ///
    /// With `Lifecycle=foreground` this is a session start (R8a); with `client` the app starts in the background.
    public mutating func start(now: Double, cachedFetchedAt: Double?) {
        fetchedAt = cachedFetchedAt
        lastCompleteAt = cachedFetchedAt
        if settings.lifecycle == .foreground { startSession(now: now) }
    }

    /// `setAppState` (`Lifecycle=client`): returns true when a session started (R8a).
    @discardableResult
    public mutating func appStateChanged(toForeground foreground: Bool, now: Double) -> Bool {
        guard settings.lifecycle == .client else { return false }
        defer { isForeground = foreground }
        guard foreground else {
            if isForeground { backgroundSince = now }
            return false
        }
        guard !isForeground else { return false }
        let longEnough = backgroundSince.map { now - $0 >= settings.sessionTimeout } ?? true
        guard sessionStartedAt == nil || longEnough else { return false }
        startSession(now: now)
        return true
    }

    /// The device registered for push (R8c): refresh when the last request was sent before now.
    @discardableResult
    public mutating func pushRegistered(now: Double) -> Bool {
        guard lastRequestSentAt.map({ $0 <= now }) ?? true else { return false }
        pendingBits |= Trigger.pushRegistered.bit
        return true
    }

    /// The user id changed (R8d): the old flags are gone, a new session starts, a request is due at once.
    public mutating func userChanged(now: Double) {
        fetchedAt = nil
        servesPartial = false
        lastCompleteAt = nil
        backoff.forgetRetries()
        lastThrottledRequestAt = nil
        pendingBits |= Trigger.userChanged.bit
        if isForeground { startSession(now: now) } else { sessionStartedAt = nil }
    }

    /// The configuration was reloaded.
    public mutating func update(settings newSettings: Settings, now: Double) {
        let lifecycleChanged = newSettings.lifecycle != settings.lifecycle
        settings = newSettings
        guard lifecycleChanged else { return }
        isForeground = settings.lifecycle == .foreground
        if isForeground, sessionStartedAt == nil { startSession(now: now) }
    }

    /// A request is about to be sent: the triggers it answers are cleared; later ones wait for the next.
    public mutating func requestStarted(now: Double) {
        lastRequestSentAt = now
        if hasValidFlags(now: now), !servesPartial { lastThrottledRequestAt = now }
        pendingBits = 0
        sessionStartDueAt = nil
    }

    /// A request finished. `automatic` failures are retried with windowed full jitter (`RefreshBackoff`: the n-th
    /// retry at a point `jitter` in [0, 1) draws from its backoff window); `retryAfter` is Pushwoosh's
    /// `Retry-After` in seconds, for a status that carries it: no request of any trigger goes before it expires,
    /// capped at `CacheMaxAge` (F3).
    public mutating func requestFinished(
        _ outcome: Outcome, automatic: Bool, now: Double, jitter: Double, retryAfter: Double? = nil
    ) {
        let draw = min(max(jitter.isFinite ? jitter : 0, 0), 1)
        switch outcome {
        case .complete:
            fetchedAt = now
            servesPartial = false
            lastCompleteAt = now
            lastCompleteSentAt = min(now, lastRequestSentAt ?? now)
            backoff.succeeded()
        case .partial:
            fetchedAt = now
            servesPartial = true
            // R13: the complete response comes with the next refresh; ask again soon without counting a failure.
            backoff.servedPartial(now: now, draw: draw, settings: settings)
        case .failed:
            backoff.failed(automatic: automatic, now: now, draw: draw, retryAfter: retryAfter, settings: settings)
        }
    }

    /// Pushwoosh's `Retry-After` came on another request (an impression's reply) or held a request back before it
    /// was sent: no request of any trigger goes before `until`, capped at `CacheMaxAge` from now (F3). No flag
    /// request failed, so no retry is counted and no backoff window widens; what was due goes when the hold ends.
    public mutating func holdRequests(until: Double, now: Double) {
        backoff.hold(until: until, now: now, cacheMaxAge: settings.cacheMaxAge)
    }

    /// Until when Pushwoosh's `Retry-After` holds every request back (F3); nil when nothing holds them.
    public func hold(now: Double) -> Double? { backoff.hold(now: now) }

    /// Applies everything due at `now`: session expiry, cache expiry. Returns what the daemon must do.
    public mutating func due(now: Double) -> Due {
        var result = Due()
        // Compared as `nextWake` computes them (a sum, not a difference), so that a wake at that very moment
        // finds the event due and never spins on a rounding difference.
        if settings.lifecycle == .foreground, let started = sessionStartedAt, now >= started + settings.sessionMaxAge {
            startSession(now: now)
            result.sessionStarted = true
        }
        if let fetched = fetchedAt, now >= fetched + settings.cacheMaxAge {
            // R15: past CacheMaxAge nothing is served; callers get their defaults.
            fetchedAt = nil
            lastCompleteAt = nil
            lastThrottledRequestAt = nil
            servesPartial = false
            result.expireFlags = true
        }
        result.refresh = dueTriggers(now: now)
        return result
    }

    /// What `due(now:)` found.
    public struct Due: Sendable, Equatable {
        public var sessionStarted = false
        public var expireFlags = false
        /// Empty when no automatic request is due.
        public var refresh: Set<Trigger> = []
    }

    // MARK: Questions

    /// R10, R12: whether a caller's refresh sends a request, or is answered from the stored flags.
    public func manualRefreshSendsRequest(now: Double) -> Bool {
        if settings.disableThrottle { return true }
        guard hasValidFlags(now: now), !servesPartial, let completeAt = lastCompleteAt else { return true }
        let windowStart = max(completeAt, lastThrottledRequestAt ?? completeAt)
        return now - windowStart >= settings.refreshThrottle
    }

    /// The earliest moment a request a caller prompts may go: `callerSpacing` after the previous request.
    public func earliestCallerRequest(now: Double) -> Double {
        guard let lastRequestSentAt else { return now }
        return max(now, lastRequestSentAt + settings.callerSpacing)
    }

    /// A provisional disk cache's age became known (the wall clock was corrected): its flags count from
    /// `corrected` when that is earlier than what they counted from, never from a later time.
    public mutating func cacheAgeKnown(fetchedAt corrected: Double) {
        guard let current = fetchedAt, corrected < current else { return }
        fetchedAt = corrected
        if lastCompleteAt == current { lastCompleteAt = corrected }
    }

    /// True while stored flags exist and are younger than `CacheMaxAge`.
    public func hasValidFlags(now: Double) -> Bool {
        guard let fetched = fetchedAt else { return false }
        return now < fetched + settings.cacheMaxAge
    }

    /// True while the flags served are older than `RefreshInterval` because refreshes fail.
    public func isStale(now: Double) -> Bool {
        guard let fetched = fetchedAt, failures > 0 else { return false }
        return now - fetched > settings.refreshInterval
    }

    /// When the next automatic request is due, if one is planned.
    public func nextRefreshAt(now: Double) -> Double? {
        let automaticAllowed = isForeground || settings.lifecycle == .foreground
        // In the background only the triggers `dueTriggers` lets through count: a session start left pending
        // there waits for the next foreground instead of waking the refresher over and over.
        // The earliest of the candidates, kept without an array: the fleet simulator asks this a hundred
        // million times.
        var next = Double.infinity
        if pendingBits & Self.callerBits != 0 {
            next = min(next, earliestCallerRequest(now: now))
        }
        if automaticAllowed, pendingBits & Trigger.sessionStart.bit != 0 {
            next = min(next, max(earliestCallerRequest(now: now), sessionStartDueAt ?? now))
        }
        if automaticAllowed {
            if let retryAt { next = min(next, retryAt) }
            if let lastCompleteAt, retryAt == nil, !isSessionStartWaiting(now: now) {
                next = min(next, intervalDue(after: lastCompleteAt))
            }
        }
        guard next.isFinite else { return nil }
        return max(next, hold(now: now) ?? next)
    }

    /// The earliest moment something is due: a refresh, a session's end, the cache's expiry.
    public func nextWake(now: Double) -> Double? {
        var next = nextRefreshAt(now: now) ?? .infinity
        if settings.lifecycle == .foreground, let started = sessionStartedAt {
            next = min(next, started + settings.sessionMaxAge)
        }
        if let fetchedAt { next = min(next, fetchedAt + settings.cacheMaxAge) }
        // The end of a hold changes what `status` shows, even with no request planned.
        if let held = hold(now: now) { next = min(next, held) }
        return next.isFinite ? next : nil
    }

    // MARK: Internals

    private mutating func startSession(now: Double) {
        session += 1
        sessionStartedAt = now
        backgroundSince = nil
        // F2: with usable flags the request waits for the device's next slot, or a share of the delay set by the
        // phase when the slot is further; the flags are served meanwhile. Without flags it goes at once.
        let delay = settings.sessionStartDelay
        if pendingBits == 0, delay > 0, hasValidFlags(now: now) {
            let untilSlot = slot(atOrAfter: now) - now
            sessionStartDueAt = now + (settings.effectiveSpread > 0 && untilSlot <= delay ? untilSlot : phase * delay)
        } else {
            sessionStartDueAt = nil
        }
        pendingBits |= Trigger.sessionStart.bit
    }

    /// True while a pending session start waits for the device's slot (F2).
    private func isSessionStartWaiting(now: Double) -> Bool {
        guard let sessionStartDueAt, now < sessionStartDueAt else { return false }
        return pendingBits & Trigger.sessionStart.bit != 0
    }

    private func dueTriggers(now: Double) -> Set<Trigger> {
        if hold(now: now) != nil { return [] }
        // Pending triggers come from callers (and the session start): they wait for the spacing.
        var triggers = earliestCallerRequest(now: now) <= now ? pendingBits : 0
        // F2: a session start waiting for the device's slot holds an overdue interval refresh (an old cache
        // at boot) with it; the flags are served meanwhile.
        let sessionStartWaits = isSessionStartWaiting(now: now)
        if sessionStartWaits, triggers == Trigger.sessionStart.bit { triggers = 0 }
        let automaticAllowed = isForeground || settings.lifecycle == .foreground
        guard automaticAllowed else { return Self.triggers(triggers & Self.callerBits) }
        if let retryAt, now >= retryAt { triggers |= Trigger.retry.bit }
        if retryAt == nil, !sessionStartWaits, let lastCompleteAt, now >= intervalDue(after: lastCompleteAt) {
            triggers |= Trigger.interval.bit
        }
        return Self.triggers(triggers)
    }

    /// The triggers callers prompt, which are due in the background too.
    private static let callerBits = Trigger.userChanged.bit | Trigger.pushRegistered.bit

    private static func triggers(_ bits: UInt8) -> Set<Trigger> {
        guard bits != 0 else { return [] }
        var set = Set<Trigger>(minimumCapacity: 2)
        for trigger in Trigger.allCases where bits & trigger.bit != 0 { set.insert(trigger) }
        return set
    }
}
