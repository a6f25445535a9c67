/// Lets a repeated event through to the log at most once per interval, counting the ones it held back.
///
/// A peer in a loop (connections past `MaxConnections`, control calls it may not make) must not flood the
/// journal: the first event is logged at once, later ones at most once per `interval`, each line with the
/// number of events it stands for. Time comes in as a parameter (nanoseconds on any monotonic clock).
struct LogThrottle {
    let interval: UInt64
    private var count = 0
    private var lastLine: UInt64?

    init(interval: UInt64 = 1_000_000_000) {
        self.interval = interval
    }

    /// Records one event at `now`; returns how many events the log line due now stands for, or nil when no
    /// line is due.
    mutating func record(now: UInt64) -> Int? {
        count += 1
        if let lastLine, now &- lastLine < interval { return nil }
        defer {
            count = 0
            lastLine = now
        }
        return count
    }
}
