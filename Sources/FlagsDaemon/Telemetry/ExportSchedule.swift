/// One signal's export schedule: when its next export is due, its backoff after failures, and whether the wait is
/// the collector's own `Retry-After`.
///
/// Pure: times come in as monotonic seconds, so that every rule is tested with made-up times. The exporter keeps
/// one per signal and tells each what its exports did, and the other's return (`collectorReturned`).
struct ExportSchedule: Sendable, Equatable {
    /// When the next export is due.
    private(set) var due: Double
    private(set) var backoff = ExportBackoff()
    /// The wait under way is the collector's `Retry-After` for this signal, which nothing shortens.
    private var collectorAsked = false
    /// The last failure logged, so that a collector that stays down is logged once, not every attempt.
    var reported: String?

    /// A schedule whose first export is due at `due`.
    init(due: Double) {
        self.due = due
    }

    /// True while the signal waits out a backoff after failures, not merely its interval.
    var isBackingOff: Bool { backoff.failures > 0 }

    /// The export went through: the next one after `interval`. True when it ended a run of failures: the
    /// collector is back.
    mutating func sent(now: Double, interval: Duration) -> Bool {
        let returned = isBackingOff
        backoff.succeeded()
        collectorAsked = false
        due = now + interval.seconds
        return returned
    }

    /// The export is worth sending again: after the backoff's wait, or after the collector's `Retry-After`
    /// (`retryAfter`, in seconds) when it sent one; `random` in 0..<1.
    mutating func failed(now: Double, retryAfter: Double?, random: Double) {
        due = now + backoff.next(retryAfter: retryAfter, random: random).seconds
        collectorAsked = retryAfter != nil
    }

    /// The collector refused the export for good: it is dropped, and the next one goes after `interval`.
    mutating func refused(now: Double, interval: Duration) {
        backoff.succeeded()
        collectorAsked = false
        due = now + interval.seconds
    }

    /// Nothing to send this time (no reads were counted): looked at again after `interval`, the backoff kept.
    mutating func skipped(now: Double, interval: Duration) {
        due = now + interval.seconds
    }

    /// The other signal's export to the same collector went through after failing, so the collector is back: a
    /// backoff's wait ends now, instead of up to five minutes later. A wait the collector asked for with
    /// `Retry-After` stands: it said when this signal may come back, and the other's success does not change
    /// that.
    mutating func collectorReturned(now: Double) {
        guard isBackingOff, !collectorAsked else { return }
        due = min(due, now)
    }
}
