import Testing
import UnixIO

@Suite("The monotonic and boot clocks")
struct MonotonicClockTests {
    @Test("The boot clock counts at least what the monotonic clock does, which stops during suspend")
    func bootClockIncludesSuspend() {
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
