import TestSupport
import Testing

@testable import FlagsDaemon

/// `PropagationTracker` with made-up times: a change counts when the last connection it was queued on has
/// written it, not before.
@Suite(.hangLimit) struct PropagationTrackerTests {
    @Test func aChangeCountsWhenItsLastSlowConnectionHasWrittenIt() {
        let metrics = ServerMetrics()
        let tracker = PropagationTracker(metrics: metrics)
        tracker.queued(madeAt: 1_000_000_000, unsent: [7, 8], now: 1_001_000_000)
        #expect(metrics.propagation.count == 0)
        tracker.written(9, now: 1_002_000_000)
        tracker.written(7, now: 1_003_000_000)
        #expect(metrics.propagation.count == 0)
        #expect(!tracker.isIdle)
        tracker.written(8, now: 1_250_000_000)
        #expect(metrics.propagation.count == 1)
        #expect(metrics.propagation.sum == 0.25)
        #expect(tracker.isIdle)
    }

    @Test func aChangeEveryConnectionTookAtOnceCountsAtOnce() {
        let metrics = ServerMetrics()
        let tracker = PropagationTracker(metrics: metrics)
        tracker.queued(madeAt: 5_000, unsent: [], now: 105_000)
        #expect(metrics.propagation.count == 1)
        #expect(metrics.propagation.sum == 0.0001)
        #expect(tracker.isIdle)
    }

    @Test func aClientThatNeverReadsCannotMakeTheWaitsGrowWithoutBound() {
        let metrics = ServerMetrics()
        let tracker = PropagationTracker(metrics: metrics)
        for index in 0..<(PropagationTracker.maximumWaits + 10) {
            tracker.queued(madeAt: UInt64(index), unsent: [1], now: UInt64(index) + 1)
        }
        #expect(metrics.propagation.count == 10)
        tracker.written(1, now: 1_000)
        #expect(metrics.propagation.count == PropagationTracker.maximumWaits + 10)
    }
}
