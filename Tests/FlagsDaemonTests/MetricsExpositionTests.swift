import FlagsCore
import FlagsProtocol
import TestSupport
import Testing

@testable import FlagsDaemon

/// The two exposition formats: what differs (counter family names, `# EOF`) and what is written the same.
@Suite(.hangLimit) struct MetricsExpositionTests {
    static let families: [MetricFamily] = {
        var histogram = Histogram(bounds: [0.5])
        histogram.observe(0.25)
        var latency = MetricFamily(name: "x_seconds", kind: .histogram, help: "Latency.")
        latency.histogram = histogram
        return [
            .counter("x_requests", "Requests\nby method.", [.init(labels: [("method", "a\"b\\")], value: 3)]),
            .gauge("x_age_seconds", "Age.", 1.5),
            .gauge("x_none", "Nothing yet.", nil),
            latency,
        ]
    }()

    @Test func openMetricsNamesCounterFamiliesWithoutTotalAndEndsWithEOF() {
        #expect(
            MetricsExposition.text(Self.families, format: .openMetrics) == """
                # HELP x_requests Requests\\nby method.
                # TYPE x_requests counter
                x_requests_total{method="a\\"b\\\\"} 3
                # HELP x_age_seconds Age.
                # TYPE x_age_seconds gauge
                x_age_seconds 1.5
                # HELP x_none Nothing yet.
                # TYPE x_none gauge
                # HELP x_seconds Latency.
                # TYPE x_seconds histogram
                x_seconds_bucket{le="0.5"} 1
                x_seconds_bucket{le="+Inf"} 1
                x_seconds_sum 0.25
                x_seconds_count 1
                # EOF

                """)
    }

    @Test func prometheusTextNamesCounterFamiliesAsTheirSamplesAndHasNoEOF() {
        let text = MetricsExposition.text(Self.families, format: .prometheus)
        #expect(text.hasPrefix("# HELP x_requests_total Requests\\nby method.\n# TYPE x_requests_total counter\n"))
        #expect(!text.contains("# EOF"))
        #expect(text.hasSuffix("x_seconds_count 1\n"))
    }

    @Test func numbersAreIntegersWhenWholeAndSpelledForParsersOtherwise() {
        #expect(MetricsExposition.number(3) == "3")
        #expect(MetricsExposition.number(0.25) == "0.25")
        #expect(MetricsExposition.number(.infinity) == "+Inf")
        #expect(MetricsExposition.number(.nan) == "NaN")
    }
}
