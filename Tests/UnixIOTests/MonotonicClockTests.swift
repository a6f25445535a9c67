import TestSupport
import Testing
import UnixIO

@Suite("The monotonic and boot clocks", .hangLimit)
struct MonotonicClockTests {
    /// What the kernel promises of the two readings, not which clock a timer uses: that the running daemon's
    /// timers are on CLOCK_BOOTTIME is DaemonTimerClockTests' (the timerfd's clockid in /proc/PID/fdinfo).
    @Test("The boot clock reads at least what the monotonic clock reads")
    func bootClockReadsAtLeastTheMonotonicClock() {
        let monotonic = MonotonicClock.seconds()
        let boot = MonotonicClock.bootSeconds()
        #expect(boot >= monotonic)
    }

    @Test("Both clocks move forward between two readings")
    func clocksMoveForward() {
        let (monotonic, boot) = (MonotonicClock.nanoseconds(), MonotonicClock.bootSeconds())
        while MonotonicClock.nanoseconds() == monotonic {}
        #expect(MonotonicClock.nanoseconds() > monotonic)
        #expect(MonotonicClock.bootSeconds() > boot)
    }
}
