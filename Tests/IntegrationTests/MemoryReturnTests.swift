import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Memory that subscribers who never read made the daemon queue goes back to the system once they are gone.
@Suite struct MemoryReturnTests {
    @Test func memoryQueuedForSubscribersWhoNeverReadIsGivenBackOnceTheyAreCut() async throws {
        let daemon = try DaemonProcess.serving(SlowSubscriberTests.flags(round: 0))
        defer { daemon.cleanUp() }
        let pid = daemon.process.processIdentifier
        let before = try #require(ProcessStatus(pid: pid))
        // Each subscription gets its own notification, so each connection queues up to MaxPendingBytes.
        var sluggards: [RawClient] = []
        for _ in 0..<24 {
            let sluggard = try daemon.connect()
            for index in 0..<4 {
                let keys: JSONValue = .array([.string("flag_\(index)"), .string("flag_\(index + 100)")])
                _ = try #require(try sluggard.call("listen", ["keys": keys]))
            }
            _ = try #require(try sluggard.call("listen"))
            sluggards.append(sluggard)
        }
        let observer = try daemon.connect()
        var peak = before
        for round in 1...40 {
            try daemon.writeFlags(SlowSubscriberTests.flags(round: round))
            #expect(
                await Eventually.wait {
                    (try? observer.call("get", ["key": "flag_7"])?["result"]?["flag"]?["ruleId"])
                        == .string("r_\(round)")
                })
            if let now = ProcessStatus(pid: pid), now.anonymousKiB > peak.anonymousKiB { peak = now }
        }
        for sluggard in sluggards { #expect(sluggard.isClosedByPeer(), "a subscriber that never reads was kept") }
        let grown = peak.anonymousKiB - before.anonymousKiB
        try #require(Sanitizer.isActive || grown > 32_000, "the subscribers made the daemon grow by \(grown) KiB only")
        // Once they are gone, the daemon falls back to within a quarter of what they made it grow by.
        var after = peak
        let returned = await Eventually.wait(timeout: .seconds(10)) {
            after = ProcessStatus(pid: pid) ?? after
            return after.anonymousKiB - before.anonymousKiB < grown / 4
        }
        #expect(Sanitizer.isActive || returned, "RssAnon: before \(before), peak \(peak), after the drain \(after)")
        print("memory return: before \(before); peak \(peak); after the drain \(after)")
    }
}
