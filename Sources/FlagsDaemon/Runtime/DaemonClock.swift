import FoundationEssentials
import UnixIO

/// The daemon's two clocks, and a way to wait.
///
/// Intervals are measured on the boot clock (`CLOCK_BOOTTIME`: it counts through suspend and is never set), so
/// a wall clock that NTP corrects by hours or years neither stops refreshing nor keeps flags past their age.
/// The wall clock is only for what people read (`status`, the log) and what files keep.
protocol DaemonClock: Sendable {
    /// Seconds on the boot clock.
    func bootNow() -> Double
    /// Unix seconds on the wall clock.
    func wallNow() -> Double
    /// Sleeps until the boot clock reads `deadline`, or until the task is cancelled.
    func sleep(until deadline: Double) async
}

/// The machine's clocks.
struct SystemClock: DaemonClock {
    func bootNow() -> Double { MonotonicClock.bootSeconds() }

    func wallNow() -> Double { Date().timeIntervalSince1970 }

    /// `Task.sleep` runs on ContinuousClock, which on Linux is CLOCK_BOOTTIME (the daemon's executor arms its
    /// timerfd on that clock), so a sleep ends on time across a suspend.
    func sleep(until deadline: Double) async {
        try? await Task.sleep(for: .seconds(max(0, deadline - bootNow())))
    }
}
