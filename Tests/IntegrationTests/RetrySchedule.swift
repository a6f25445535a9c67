/// The retry delays the daemon promises (README, Decisions: Retries), as a test computes bounds from them.
///
/// The n-th retry after a failed automatic refresh waits `RetryBackoff × 2^(n−1)`, capped at `RefreshInterval`,
/// times a jitter factor in 0.75...1.25.
struct RetrySchedule {
    var backoff: Double
    var interval: Double
    /// What one request and its answer may add to a gap on a loaded machine, in seconds.
    var slack = 0.15

    /// The nominal delay before retry `n` (1-based), without jitter.
    func nominal(_ n: Int) -> Double {
        var delay = backoff
        for _ in 1..<max(n, 1) { delay *= 2 }
        return min(delay, max(interval, backoff))
    }

    /// The smallest and largest gap the jitter allows before retry `n`, plus `slack` on the late side.
    func window(_ n: Int) -> ClosedRange<Double> {
        (0.75 * nominal(n) - 0.01)...(1.25 * nominal(n) + slack)
    }

    /// How many requests (the first one included) may arrive within `seconds` of the first, at least and at most.
    func requestCount(within seconds: Double) -> ClosedRange<Int> {
        var earliest = 0.0
        var latest = 0.0
        var most = 1
        var least = 1
        for n in 1...10_000 {
            earliest += window(n).lowerBound
            latest += window(n).upperBound
            if earliest <= seconds { most += 1 }
            if latest <= seconds { least += 1 }
            if earliest > seconds { break }
        }
        return least...most
    }
}
