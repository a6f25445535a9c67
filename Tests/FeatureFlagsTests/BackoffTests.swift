import TestSupport
import Testing

@testable import FeatureFlags

@Suite(.hangLimit) struct BackoffTests {
    @Test("Backoff starts at 50 ms, doubles, stays at 2 s, and starts over after a reset")
    func doublesUpToTheCap() {
        var backoff = Backoff(initial: .milliseconds(50), maximum: .seconds(2))
        let delays = (0..<8).map { _ in backoff.next() }
        #expect(
            delays == [
                .milliseconds(50), .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
                .milliseconds(1600), .seconds(2), .seconds(2),
            ])
        backoff.reset()
        #expect(backoff.next() == .milliseconds(50))
    }
}
