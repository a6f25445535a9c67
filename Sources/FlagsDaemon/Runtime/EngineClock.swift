import UnixIO

/// The engine's time: monotonic nanoseconds, and the conversions its epoll timeouts need.
enum EngineClock {
    static func now() -> UInt64 { MonotonicClock.nanoseconds() }

    /// `duration` in nanoseconds, 0 for a negative one; saturating at half the range, so that no duration,
    /// however long, traps here and a deadline `now() + nanoseconds(...)` never overflows.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = UInt64(max(0, seconds)).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? UInt64.max / 2 : min(UInt64.max / 2, whole + UInt64(max(0, attoseconds) / 1_000_000_000))
    }

    /// The epoll timeout that wakes at `deadline` (rounded up to a whole millisecond); 0 once it passed.
    static func milliseconds(until deadline: UInt64) -> Int32 {
        let now = now()
        guard deadline > now else { return 0 }
        return Int32(min(UInt64(Int32.max), (deadline - now + 999_999) / 1_000_000))
    }
}
