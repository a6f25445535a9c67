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
public struct RefreshPolicy: Sendable, Equatable {
    /// The configured durations (README, Configuration) in seconds, and the lifecycle.
    public struct Settings: Sendable, Equatable {
        public var cacheMaxAge: Double
        public var refreshInterval: Double
        public var sessionTimeout: Double
        public var sessionMaxAge: Double
        public var refreshThrottle: Double
        public var disableThrottle: Bool
        public var lifecycle: Lifecycle
        public var retryBackoff: Double
        /// The least time between the previous request and one a caller prompts (not a configuration key).
        public var callerSpacing = RefreshPolicy.callerSpacing

        public init(_ configuration: Configuration) {
            cacheMaxAge = configuration.cacheMaxAge.seconds
            refreshInterval = configuration.refreshInterval.seconds
            sessionTimeout = configuration.sessionTimeout.seconds
            sessionMaxAge = configuration.sessionMaxAge.seconds
            refreshThrottle = configuration.refreshThrottle.seconds
            disableThrottle = configuration.disableThrottle
            lifecycle = configuration.lifecycle
            retryBackoff = configuration.retryBackoff.seconds
        }
    }

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
    public private(set) var lastRequestSentAt: Double?
    /// The last request sent while valid, complete flags were served: R10 counts requests sent, failed or not.
    private var lastThrottledRequestAt: Double?
    /// Automatic refreshes that failed in a row.
    public private(set) var failures = 0
    public private(set) var retryAt: Double?
    /// Triggers waiting for the next request.
    public private(set) var pending: Set<Trigger> = []

    public init(settings: Settings) {
        self.settings = settings
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
        pending.insert(.pushRegistered)
        return true
    }

    /// The user id changed (R8d): the old flags are gone, a new session starts, a request is due at once.
    public mutating func userChanged(now: Double) {
        fetchedAt = nil
        servesPartial = false
        lastCompleteAt = nil
        failures = 0
        retryAt = nil
        lastThrottledRequestAt = nil
        pending.insert(.userChanged)
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
        pending.removeAll()
    }

    /// A request finished. `automatic` failures are retried with backoff (`jitter` in 0..<1 spreads retries).
    public mutating func requestFinished(_ outcome: Outcome, automatic: Bool, now: Double, jitter: Double) {
        switch outcome {
        case .complete:
            fetchedAt = now
            servesPartial = false
            lastCompleteAt = now
            failures = 0
            retryAt = nil
        case .partial:
            fetchedAt = now
            servesPartial = true
            // R13: the complete response comes with the next refresh; ask again soon without counting a failure.
            retryAt = now + settings.retryBackoff * Self.jitterFactor(jitter)
        case .failed:
            guard automatic else { return }
            failures += 1
            let exponent = Double(min(failures - 1, 30))
            let backoff = min(
                settings.retryBackoff * Self.power(2, exponent), max(settings.refreshInterval, settings.retryBackoff))
            retryAt = now + backoff * Self.jitterFactor(jitter)
        }
    }

    /// Applies everything due at `now`: session expiry, cache expiry. Returns what the daemon must do.
    public mutating func due(now: Double) -> Due {
        var result = Due()
        if settings.lifecycle == .foreground, let started = sessionStartedAt, now - started >= settings.sessionMaxAge {
            startSession(now: now)
            result.sessionStarted = true
        }
        if let fetched = fetchedAt, now - fetched >= settings.cacheMaxAge {
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
        return now - fetched < settings.cacheMaxAge
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
        let duePending = automaticAllowed ? pending : pending.intersection([.userChanged, .pushRegistered])
        var candidates: [Double] = []
        if !duePending.isEmpty { candidates.append(earliestCallerRequest(now: now)) }
        if automaticAllowed {
            if let retryAt { candidates.append(retryAt) }
            if let lastCompleteAt, retryAt == nil { candidates.append(lastCompleteAt + settings.refreshInterval) }
        }
        return candidates.min()
    }

    /// The earliest moment something is due: a refresh, a session's end, the cache's expiry.
    public func nextWake(now: Double) -> Double? {
        var candidates: [Double] = []
        if let refresh = nextRefreshAt(now: now) { candidates.append(refresh) }
        if settings.lifecycle == .foreground, let started = sessionStartedAt {
            candidates.append(started + settings.sessionMaxAge)
        }
        if let fetchedAt { candidates.append(fetchedAt + settings.cacheMaxAge) }
        return candidates.min()
    }

    // MARK: Internals

    private mutating func startSession(now: Double) {
        session += 1
        sessionStartedAt = now
        backgroundSince = nil
        pending.insert(.sessionStart)
    }

    private func dueTriggers(now: Double) -> Set<Trigger> {
        // Pending triggers come from callers (and the session start): they wait for the spacing.
        var triggers = earliestCallerRequest(now: now) <= now ? pending : []
        let automaticAllowed = isForeground || settings.lifecycle == .foreground
        guard automaticAllowed else { return triggers.intersection([.userChanged, .pushRegistered]) }
        if let retryAt, now >= retryAt { triggers.insert(.retry) }
        if retryAt == nil, let lastCompleteAt, now - lastCompleteAt >= settings.refreshInterval {
            triggers.insert(.interval)
        }
        return triggers
    }

    /// 0.75 to 1.25: retries from many devices spread out instead of arriving together.
    static func jitterFactor(_ jitter: Double) -> Double {
        0.75 + 0.5 * min(max(jitter, 0), 1)
    }

    private static func power(_ base: Double, _ exponent: Double) -> Double {
        var result = 1.0
        for _ in 0..<Int(exponent) { result *= base }
        return result
    }
}

extension Duration {
    /// The duration in seconds, as a Double.
    public var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
