import FlagsCore
import TestSupport
import Testing

/// The bound on sends: a burst, then a steady rate.
@Suite(.hangLimit) struct TokenBucketTests {
    /// Whether each try at `times` got a token.
    static func tries(_ bucket: inout TokenBucket, at times: [Double]) -> [Bool] {
        times.map { bucket.take(now: $0) }
    }

    @Test("A full bucket gives its capacity at once, then one token per 1/rate seconds")
    func burstThenRate() {
        var bucket = TokenBucket(capacity: 30, ratePerSecond: 1)
        let burst = Self.tries(&bucket, at: Array(repeating: 100, count: 40)).filter { $0 }.count
        #expect(burst == 30)
        #expect(Self.tries(&bucket, at: [100.5, 101, 101.2]) == [false, true, false])
        // Over a long loop the average is the rate: 60 s of tries every 10 ms give about 60 tokens.
        let steady = Self.tries(&bucket, at: Array(stride(from: 102.0, to: 162.0, by: 0.01))).filter { $0 }.count
        #expect((59...61).contains(steady))
    }

    @Test("Time running backwards (never on the boot clock) gives no tokens")
    func noTokensFromThePast() {
        var bucket = TokenBucket(capacity: 1, ratePerSecond: 1)
        #expect(Self.tries(&bucket, at: [50, 10, 50.5, 51]) == [true, false, false, true])
    }
}
