/// The timing arithmetic of `RefreshPolicy`: what a request's outcome does to when the next one may go. The
/// policy decides what is due (triggers, sessions, slots, expiry); this keeps the retries that failures and partial
/// responses plan, and the hold Pushwoosh's `Retry-After` asks for (F3), in seconds on the boot clock.
///
/// Failed automatic refreshes are retried with windowed full jitter: the n-th retry goes at a point drawn
/// uniformly from its backoff window, `RetryBackoff × 2^(n−1)` wide and capped at `RefreshInterval`, and each
/// window starts where the previous one ended (or now, or when a hold ends, whichever is later). A fleet's retries
/// spread over each window as full jitter spreads them, and no device retries twice in one window, so an outage of
/// any length costs each device a bounded number of requests.
struct RefreshBackoff: Sendable, Equatable {
    /// Automatic refreshes that failed in a row.
    private(set) var failures = 0
    /// When the planned retry goes; nil when none is planned.
    private(set) var retryAt: Double?
    /// The end of the current retry's backoff window: the next window starts here, so that a device sends at
    /// most one retry per window however its draws fall.
    private var retryWindowEnd: Double?
    /// Nothing may be sent before this (F3).
    private(set) var heldUntil: Double?

    /// A complete response: no retry, no window, no hold.
    mutating func succeeded() {
        failures = 0
        retryAt = nil
        retryWindowEnd = nil
        heldUntil = nil
    }

    /// A partial response (R13): ask again within `RetryBackoff` (at `draw` of it), without counting a failure.
    mutating func servedPartial(now: Double, draw: Double, settings: RefreshPolicy.Settings) {
        heldUntil = nil
        retryAt = now + settings.retryBackoff * draw
    }

    /// A failed request: `retryAfter` (seconds, finite) holds every request back, at most `CacheMaxAge`; an
    /// `automatic` one counts a failure and plans the retry at `draw` of its window.
    mutating func failed(
        automatic: Bool, now: Double, draw: Double, retryAfter: Double?, settings: RefreshPolicy.Settings
    ) {
        if let retryAfter, retryAfter.isFinite {
            heldUntil = now + min(max(retryAfter, 0), settings.cacheMaxAge)
        }
        guard automatic else { return }
        failures += 1
        let width = Self.window(failures: failures, settings: settings)
        let windowStart = max(now, heldUntil ?? now, retryWindowEnd ?? now)
        retryAt = windowStart + width * draw
        retryWindowEnd = windowStart + width
    }

    /// The width of the `failures`-th retry's window: `RetryBackoff × 2^(failures−1)`, at most `RefreshInterval`
    /// (or `RetryBackoff` itself, when that is longer).
    static func window(failures: Int, settings: RefreshPolicy.Settings) -> Double {
        var doubled = settings.retryBackoff
        for _ in 0..<min(max(failures - 1, 0), 30) { doubled *= 2 }
        return min(doubled, max(settings.refreshInterval, settings.retryBackoff))
    }

    /// A hold until `until` that no failure came with: capped at `cacheMaxAge` from now, never shortening a hold
    /// that already runs longer.
    mutating func hold(until: Double, now: Double, cacheMaxAge: Double) {
        guard until.isFinite, until > now else { return }
        let capped = min(until, now + cacheMaxAge)
        heldUntil = max(hold(now: now) ?? capped, capped)
    }

    /// Until when requests are held at `now`; nil when nothing holds them.
    func hold(now: Double) -> Double? {
        guard let heldUntil, now < heldUntil else { return nil }
        return heldUntil
    }

    /// The user changed: the failures and the retry were the previous user's; a hold is Pushwoosh's and stays.
    mutating func forgetRetries() {
        failures = 0
        retryAt = nil
        retryWindowEnd = nil
    }
}
