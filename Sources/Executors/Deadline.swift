#if canImport(Glibc)
    import Glibc
#endif

/// When a scheduled job may run: nanoseconds on one of the two kernel clocks Swift's clocks read on Linux.
struct Deadline: Equatable, Sendable {
    /// The kernel clock a deadline is counted on.
    enum Clock: Equatable, Sendable {
        /// `CLOCK_BOOTTIME`, which `ContinuousClock` reads: it keeps counting while the machine is suspended.
        case boot
        /// `CLOCK_MONOTONIC`, which `SuspendingClock` reads: it stops while the machine is suspended.
        case monotonic

        /// Nanoseconds on this clock now.
        var now: Int64 {
            var spec = timespec()
            clock_gettime(self == .boot ? CLOCK_BOOTTIME : CLOCK_MONOTONIC, &spec)
            return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
        }
    }

    var clock: Clock
    var nanoseconds: Int64

    #if compiler(>=6.3)
        /// The deadline `instant` of `clock` stands for. `ContinuousClock` and `SuspendingClock` instants are read
        /// exactly (their value is the kernel clock's reading); for any other clock whose durations are `Duration`s,
        /// its distance from that clock's `now` is counted from now on the boot clock. Nil for a clock with a
        /// duration type of its own, which no code can convert.
        init?<C: _Concurrency.Clock>(_ instant: C.Instant, of clock: C) {
            if let instant = instant as? ContinuousClock.Instant {
                self.init(
                    clock: .boot, nanoseconds: Self.nanoseconds(ContinuousClock().systemEpoch.duration(to: instant)))
            } else if let instant = instant as? SuspendingClock.Instant {
                self.init(
                    clock: .monotonic,
                    nanoseconds: Self.nanoseconds(SuspendingClock().systemEpoch.duration(to: instant)))
            } else if let delay = clock.now.duration(to: instant) as? Duration {
                let now = Clock.boot.now
                let (sum, overflow) = now.addingReportingOverflow(Self.nanoseconds(delay))
                self.init(clock: .boot, nanoseconds: overflow ? Int64.max : sum)
            } else {
                return nil
            }
        }
    #endif

    init(clock: Clock, nanoseconds: Int64) {
        self.clock = clock
        self.nanoseconds = nanoseconds
    }

    /// The deadline the runtime's deadline hook passes (Swift before 6.3, `ProcessExecutors+Hooks.swift`): a
    /// reading of the clock it names by number, 1 for `ContinuousClock` (the boot clock) and 2 for
    /// `SuspendingClock` (the monotonic clock). Nil for another number, which no clock of the runtime has.
    init?(seconds: Int64, nanoseconds: Int64, runtimeClock: Int32) {
        let clock: Clock
        switch runtimeClock {
        case 1: clock = .boot
        case 2: clock = .monotonic
        default: return nil
        }
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflowed) = scaled.addingReportingOverflow(nanoseconds)
        self.init(clock: clock, nanoseconds: overflow || overflowed ? (seconds < 0 ? Int64.min : Int64.max) : sum)
    }

    /// The deadline `delay` nanoseconds from now on the boot clock, as the runtime's delay hook passes it (Swift
    /// before 6.3: `Task.sleep(nanoseconds:)`).
    init(nanosecondsFromNow delay: UInt64) {
        let (sum, overflow) = Clock.boot.now.addingReportingOverflow(Int64(clamping: delay))
        self.init(clock: .boot, nanoseconds: overflow ? Int64.max : sum)
    }

    /// Whether the deadline has come.
    var hasPassed: Bool { clock.now >= nanoseconds }

    /// The boot clock's reading at which the deadline comes if the machine is not suspended before: the
    /// deadline itself on the boot clock; on the monotonic clock, its distance from now added to the boot
    /// clock's now. A suspension makes the boot clock run ahead, so that such an estimate comes early, never
    /// late: the pool then finds the deadline not yet passed and estimates again.
    var bootEstimate: Int64 {
        guard clock == .monotonic else { return nanoseconds }
        let (sum, overflow) = Clock.boot.now.addingReportingOverflow(nanoseconds &- Clock.monotonic.now)
        return overflow ? Int64.max : sum
    }

    /// `duration` in whole nanoseconds, saturated to what an `Int64` holds.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? Int64.min : Int64.max }
        let (sum, overflowed) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowed ? (seconds < 0 ? Int64.min : Int64.max) : sum
    }
}
