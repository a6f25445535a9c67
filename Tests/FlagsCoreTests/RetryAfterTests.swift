import FlagsCore
import TestSupport
import Testing

/// Pushwoosh's `Retry-After`, read by hand: delta-seconds and the IMF-fixdate (F3).
@Suite(.hangLimit) struct RetryAfterTests {
    /// `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110's example, as Unix seconds.
    let example = 784_111_777.0

    @Test(
        "Delta-seconds are the wait, whitespace around them ignored",
        arguments: [("12", 12.0), (" 0 ", 0), ("120", 120)])
    func deltaSeconds(header: String, seconds: Double) {
        #expect(RetryAfter.seconds(header, now: 1_000) == seconds)
    }

    @Test("An IMF-fixdate is the wait from now; one in the past is no wait")
    func httpDate() {
        #expect(RetryAfter.imfFixdate("Sun, 06 Nov 1994 08:49:37 GMT") == example)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:37 GMT", now: example - 90) == 90)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:37 GMT", now: example + 90) == 0)
        #expect(RetryAfter.imfFixdate("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(RetryAfter.imfFixdate("Tue, 29 Feb 2028 23:59:59 GMT") == 1_835_481_599)
        #expect(RetryAfter.imfFixdate("Tue, 01 Dec 2026 15:00:00 GMT") == 1_796_137_200)
    }

    @Test(
        "What is not delta-seconds or an IMF-fixdate gives nil, so the ordinary backoff applies",
        arguments: [
            "", "soon", "-5", "1.5", "Sun, 06 Nov 1994 08:49:37 PST", "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
            // Impossible dates and a weekday that does not match the date: a server that sends them is not
            // telling a time, and holding every request for the whole cap on its word would be wrong.
            "Sat, 31 Feb 2099 08:49:37 GMT", "Sun, 30 Feb 2028 08:49:37 GMT", "Mon, 29 Feb 2027 08:49:37 GMT",
            "Wed, 31 Apr 2026 08:49:37 GMT", "Mon, 06 Nov 1994 08:49:37 GMT", "Wed, 01 Dec 2026 15:00:00 GMT",
        ])
    func unknownIsNil(header: String) {
        #expect(RetryAfter.seconds(header, now: example) == nil)
    }

    @Test("An absurdly long number stays a finite number (the policy caps it)")
    func hugeNumber() throws {
        let seconds = try #require(RetryAfter.seconds(String(repeating: "9", count: 400), now: 0))
        #expect(seconds.isFinite && seconds > 1e10)
    }
}
