/// The retry times the daemon promises (docs/decisions.md: Retries), as a test computes bounds from them.
///
/// After a failed automatic refresh, retry `n` goes at a random point of its backoff window: the windows are
/// `RetryBackoff × 2^(n−1)` wide, capped at `RefreshInterval`, and follow one another from the first failure
/// (windowed full jitter). So each retry's time since the first request has hard bounds, and so has the count.
struct RetrySchedule {
    var backoff: Double
    var interval: Double
    /// What one request and its answer may add on a loaded machine, in seconds: each retry's window starts
    /// when the previous answer came, so this adds up over the retries.
    var slack = 0.15
    /// How late the test may notice the first request, in seconds.
    var early = 0.05

    /// The width of retry `n`'s window (1-based).
    func nominal(_ n: Int) -> Double {
        var delay = backoff
        for _ in 1..<max(n, 1) { delay *= 2 }
        return min(delay, max(interval, backoff))
    }

    /// When retry `n` may arrive, in seconds after the first request: within its window, plus the slack that
    /// `n` answers may add.
    func window(_ n: Int) -> ClosedRange<Double> {
        let start = (1..<max(n, 1)).reduce(0) { $0 + nominal($1) }
        return (start - early)...(start + nominal(n) + Double(n) * slack)
    }

    /// How many requests (the first one included) arrive within `seconds` of the first: at least one more for
    /// every window that ends in time, at most one more for every window that starts in time.
    func requestCount(within seconds: Double) -> ClosedRange<Int> {
        var least = 1
        var most = 1
        var n = 1
        while window(n).lowerBound <= seconds {
            most += 1
            if window(n).upperBound <= seconds { least += 1 }
            n += 1
        }
        return least...most
    }
}
