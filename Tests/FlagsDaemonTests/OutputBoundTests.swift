import TestSupport
import Testing

@testable import FlagsDaemon

/// The bound on a connection's unsent output (`ServerLimits.isOverrun`) and the backpressure on its requests
/// (`ServerLimits.takesRequests`), with made-up sizes.
@Suite(.hangLimit) struct OutputBoundTests {
    static let limits = ServerLimits(maxPendingBytes: 1000)

    @Test func requestsAreReadOnlyWhileAtMostMaxPendingBytesWait() {
        #expect(Self.limits.takesRequests(pending: 0))
        #expect(Self.limits.takesRequests(pending: 1000))
        #expect(!Self.limits.takesRequests(pending: 1001))
    }

    @Test func theMessageBeingSentIsNeverCountedWhateverItsSize() {
        // A listing of 50,000 bytes being read, nothing behind it.
        #expect(!Self.limits.isOverrun(pending: 50_000, flagSetBytes: 40_000, firstMessage: { 50_000 }))
    }

    @Test func behindItOneFlagSetAndMaxPendingBytesMayWait() {
        #expect(!Self.limits.isOverrun(pending: 50_000 + 41_000, flagSetBytes: 40_000, firstMessage: { 50_000 }))
        #expect(Self.limits.isOverrun(pending: 50_000 + 41_001, flagSetBytes: 40_000, firstMessage: { 50_000 }))
    }

    @Test func theFirstMessageIsLookedForOnlyPastTheAllowance() {
        var asked = false
        #expect(
            !Self.limits.isOverrun(
                pending: 900, flagSetBytes: 0,
                firstMessage: {
                    asked = true; return 0
                }))
        #expect(!asked)
    }
}
