import FoundationEssentials
import PushwooshAPI
import UnixIO

/// Pushwoosh's `Retry-After` as the sender keeps it (F3): after a 429 or 5xx that carries one, on a flag request
/// or an impression alike, nothing more is sent until it expires, capped at `CacheMaxAge`.
///
/// The refresh policy holds its own triggers from a flag request's reply and says until when; this hold is the
/// sender's last word, so that an impression's reply holds the flag requests too and a flag request's reply
/// holds the impressions.
final class RetryAfterHold: Sendable {
    private struct State {
        var until: ContinuousClock.Instant?
        var cap: Duration
        /// Told the seconds a new or longer hold lasts, whichever request's reply started it.
        var observers: [@Sendable (Double) -> Void] = []
    }

    private let state: Locked<State>
    private let wallNow: @Sendable () -> Double

    init(cap: Duration, wallNow: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        state = Locked(State(until: nil, cap: cap))
        self.wallNow = wallNow
    }

    /// A reload changed `CacheMaxAge`.
    func update(cap: Duration) {
        state.withLock { $0.cap = cap }
    }

    /// Takes the hold a failed reply asks for, if any; a shorter one never shortens a longer one.
    func note(_ error: PushwooshError) {
        guard let seconds = error.retryAfterSeconds(now: wallNow()), seconds.isFinite, seconds > 0 else { return }
        let now = ContinuousClock.now
        let (longer, observers) = state.withLock { state in
            let until = now + min(.milliseconds(Int64((seconds * 1000).rounded(.up))), state.cap)
            let longer = state.until.map { until > $0 } ?? true
            state.until = max(state.until ?? until, until)
            return (longer, state.observers)
        }
        guard longer, let remaining = remainingSeconds(now: now) else { return }
        for observer in observers { observer(remaining) }
    }

    /// Calls `observer` with the seconds it lasts each time a hold starts or grows, so that the refresh policy,
    /// `status`, `explain` and the metrics see one hold, whichever request's reply started it.
    func observe(_ observer: @escaping @Sendable (Double) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// The seconds the hold still lasts, or nil when nothing is held.
    func remainingSeconds(now: ContinuousClock.Instant = .now) -> Double? {
        guard let until = state.withLock({ $0.until }), now < until else { return nil }
        let remaining = (until - now).components
        return Double(remaining.seconds) + Double(remaining.attoseconds) / 1e18
    }

    /// Why nothing may be sent now, or nil when it may.
    func refusal() -> PushwooshError? {
        let now = ContinuousClock.now
        guard let until = state.withLock({ $0.until }), now < until else { return nil }
        let remaining = (until - now).components
        let seconds = remaining.seconds + (remaining.attoseconds > 0 ? 1 : 0)
        return .notSent("Pushwoosh asked (Retry-After) that nothing be sent for another \(seconds) s")
    }
}
