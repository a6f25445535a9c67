/// The retry delays the daemon promises (docs/decisions.md: Retries), as a test computes bounds from them.
///
/// The n-th retry after a failed automatic refresh waits a random time between 0 and `RetryBackoff × 2^(n−1)`,
/// capped at `RefreshInterval` (full jitter).
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
        0...(nominal(n) + slack)
    }

    /// How many requests (the first one included) arrive within `seconds` of the first: at least as many as the
    /// longest waits allow, at most as many as waits of a sixth of the backoff would give. Full jitter draws
    /// waits down to zero, but the sum of many uniform draws lies near half of their bounds: falling below a
    /// sixth over a run of retries is a many-sigma event, and a storm would pass it at once.
    func requestCount(within seconds: Double) -> ClosedRange<Int> {
        var short = 0.0
        var latest = 0.0
        var most = 1
        var least = 1
        for n in 1...10_000 {
            short += nominal(n) / 6
            latest += window(n).upperBound
            if short <= seconds { most += 1 }
            if latest <= seconds { least += 1 }
            if short > seconds { break }
        }
        return least...most
    }
}
