import FlagsCore
import TestSupport
import Testing

/// `Histogram`: observations land in the first bucket whose bound holds them, and the counts add up.
@Suite(.hangLimit) struct HistogramTests {
    @Test func observationsFillCumulativeBucketsWithTheirSumAndCount() {
        var histogram = Histogram(bounds: [0.1, 1])
        #expect(histogram.cumulativeCounts == [0, 0, 0])
        histogram.observe(0.05)
        histogram.observe(0.1)
        histogram.observe(0.5)
        histogram.observe(7)
        #expect(histogram.counts == [2, 1])
        #expect(histogram.cumulativeCounts == [2, 3, 4])
        #expect(histogram.count == 4)
        #expect(histogram.sum == 7.65)
    }
}
