import FlagsCore
import TestSupport
import Testing

@Suite(.hangLimit) struct DurationTests {
    @Test(arguments: [
        ("500ms", Duration.milliseconds(500)),
        ("10s", .seconds(10)),
        ("5min", .seconds(300)),
        ("1h", .seconds(3600)),
        ("24h", .seconds(86400)),
        ("1h 30min", .seconds(5400)),
        ("1h30min", .seconds(5400)),
        ("1.5h", .seconds(5400)),
        ("90", .seconds(90)),
        ("0", .zero),
        ("0.25", .milliseconds(250)),
        ("  2m\t", .seconds(120)),
        ("5 min", .seconds(300)),
        ("1d 2h", .seconds(93600)),
        ("2w", .seconds(14 * 86400)),
        ("1h 30", .seconds(3630)),
        ("1.000001s", .microseconds(1_000_001)),
        ("1.0000019s", .microseconds(1_000_001)),
    ])
    func parsesSystemdSpans(text: String, expected: Duration) {
        #expect(Duration(systemdTimeSpan: text) == expected)
    }

    @Test(
        arguments: [
            ("us", 1), ("usec", 1), ("\u{B5}s", 1), ("\u{3BC}s", 1), ("ms", 1000), ("msec", 1000),
            ("s", 1_000_000), ("sec", 1_000_000), ("second", 1_000_000), ("seconds", 1_000_000),
            ("m", 60_000_000), ("min", 60_000_000), ("minute", 60_000_000), ("minutes", 60_000_000),
            ("h", 3_600_000_000), ("hr", 3_600_000_000), ("hour", 3_600_000_000), ("hours", 3_600_000_000),
            ("d", 86_400_000_000), ("day", 86_400_000_000), ("days", 86_400_000_000),
            ("w", 604_800_000_000), ("week", 604_800_000_000), ("weeks", 604_800_000_000),
            ("M", 2_629_800_000_000), ("month", 2_629_800_000_000), ("months", 2_629_800_000_000),
            ("y", 31_557_600_000_000), ("year", 31_557_600_000_000), ("years", 31_557_600_000_000),
        ] as [(String, Int64)])
    func acceptsEverySystemdUnit(unit: String, microseconds: Int64) {
        #expect(Duration(systemdTimeSpan: "2\(unit)") == .microseconds(2 * microseconds))
    }

    @Test(arguments: [
        "", "   ", "-5s", "+5s", "5 parsecs", "5S", "5H", "1.5.5", "1.", ".", "s", "5minx", "1h,30min",
        "infinity", "99999999999999999999", "300000y", "1e3",
    ])
    func rejectsWhatIsNotASpan(text: String) {
        #expect(Duration(systemdTimeSpan: text) == nil)
    }

    // Each `Duration.` spelled out: Swift 6.0 cannot type-check the list of implicit members in reasonable time.
    @Test(arguments: [
        (Duration.zero, "0"),
        (Duration.milliseconds(500), "500ms"),
        (Duration.seconds(10), "10s"),
        (Duration.seconds(300), "5min"),
        (Duration.seconds(5400), "1h 30min"),
        (Duration.seconds(86400), "24h"),
        (Duration.seconds(47 * 3600), "47h"),
        (Duration.seconds(48 * 3600), "2d"),
        (Duration.seconds(49 * 3600 + 1), "2d 1h 1s"),
        (Duration.microseconds(1_500_001), "1s 500ms 1us"),
        (Duration.nanoseconds(1500), "1us"),
    ])
    func formatsInCompactSystemdSpelling(duration: Duration, expected: String) {
        #expect(duration.systemdTimeSpan == expected)
    }

    @Test(arguments: ["0", "1us", "500ms", "1h 30min", "24h", "2d 3h 4min 5s 6ms 7us", "3w", "1y", "2M"])
    func formattingReadsBackToTheSameDuration(text: String) throws {
        let duration = try #require(Duration(systemdTimeSpan: text))
        #expect(Duration(systemdTimeSpan: duration.systemdTimeSpan) == duration)
    }
}
