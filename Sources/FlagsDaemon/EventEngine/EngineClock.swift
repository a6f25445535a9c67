import UnixIO

/// The engine's time: monotonic nanoseconds, and the conversions its epoll timeouts need.
enum EngineClock {
    static func now() -> UInt64 { MonotonicClock.nanoseconds() }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    /// The epoll timeout that wakes at `deadline` (rounded up to a whole millisecond); 0 once it passed.
    static func milliseconds(until deadline: UInt64) -> Int32 {
        let now = now()
        guard deadline > now else { return 0 }
        return Int32(min(UInt64(Int32.max), (deadline - now + 999_999) / 1_000_000))
    }
}
