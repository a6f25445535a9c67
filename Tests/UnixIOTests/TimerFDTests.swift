import TestSupport
import Testing
import UnixIO

/// The wall-clock change timer (the machine's clock is never set by a test).
@Suite(.hangLimit) struct TimerFDTests {
    @Test("An armed timer with the clock left alone reads as nothing, not as a change")
    func quietWhileTheClockStays() throws {
        let timer = try TimerFD()
        defer { timer.close() }
        #expect(timer.read() == .nothing)
        try timer.armUntilClockChange(secondsAhead: 3600)
        #expect(timer.read() == .nothing)
    }
}
