import TestSupport
import Testing

@testable import OFREP

/// The rate rule: a burst of `perSecond`, then `perSecond` a second, each peer on its own.
@Suite(.hangLimit) struct OFREPRateLimiterTests {
    @Test func aBurstPassesThenTheNextWaitsAtLeastASecond() {
        var limiter = OFREPRateLimiter(perSecond: 2)
        #expect(limiter.admit("a", now: 10) == nil)
        #expect(limiter.admit("a", now: 10) == nil)
        #expect(limiter.admit("a", now: 10) == 1)
        #expect(limiter.admit("b", now: 10) == nil)
        #expect(limiter.admit("a", now: 10.5) == nil)
    }

    @Test func zeroMeansNoLimit() {
        var limiter = OFREPRateLimiter(perSecond: 0)
        for _ in 0..<1000 { #expect(limiter.admit("a", now: 0) == nil) }
    }

    @Test func peersWhoseBucketRefilledAreForgotten() {
        var limiter = OFREPRateLimiter(perSecond: 1)
        for peer in 0..<2000 { _ = limiter.admit("p\(peer)", now: Double(peer) * 2) }
        #expect(limiter.buckets.count <= 1025)
    }
}
