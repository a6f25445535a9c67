import TestSupport
import Testing

@testable import FlagsDaemon

/// The once-a-second log of repeated refusals, driven with made-up times.
@Suite(.hangLimit) struct LogThrottleTests {
    static let second: UInt64 = 1_000_000_000

    @Test func theFirstEventIsLoggedAtOnceAndTheRestAtMostOnceASecondWithTheirCount() {
        var throttle = LogThrottle()
        #expect(throttle.record(now: 5 * Self.second) == 1)
        var lines: [Int] = []
        // 1,000 events a second for three seconds.
        for tick in 1...3000 {
            if let count = throttle.record(now: 5 * Self.second + UInt64(tick) * Self.second / 1000) {
                lines.append(count)
            }
        }
        #expect(lines == [1000, 1000, 1000])
    }

    @Test func aQuietSpellLetsTheNextEventThroughAtOnce() {
        var throttle = LogThrottle()
        #expect(throttle.record(now: 0) == 1)
        #expect(throttle.record(now: Self.second / 2) == nil)
        #expect(throttle.record(now: 10 * Self.second) == 2)
        #expect(throttle.record(now: 10 * Self.second + 1) == nil)
    }
}
