import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A subscriber that never reads while a big flag set changes many times, at the default `MaxPendingBytes`.
@Suite(.hangLimit) struct SlowSubscriberTests {
    /// 200 flags of about 1 KiB, every one different in each round: a `flagsChanged` of about 220 KB.
    static func flags(round: Int) -> [Flag] {
        let blob = String(repeating: String(UnicodeScalar(UInt8(97 + round % 26))), count: 1000)
        return (0..<200).map { index in
            Flag(
                key: "flag_\(index)", isEnabled: round % 2 == 0, ruleId: "r_\(round)",
                properties: ["blob": .string(blob)])
        }
    }

    @Test func itIsCutAtMaxPendingBytesWhileMemoryStaysBoundedAndEveryoneElseKeepsUp() throws {
        let daemon = try DaemonProcess.serving(Self.flags(round: 0))
        defer { daemon.cleanUp() }
        let pid = daemon.process.processIdentifier
        let sluggard = try daemon.connect()
        _ = try #require(try sluggard.call("listen")?["result"])
        let reader = try daemon.connect()
        var revision = try #require(try reader.call("listen")?["result"]?["revision"]?.integerValue)
        let observer = try daemon.connect()
        #expect(try observer.call("get", ["key": "flag_0"])?["result"]?["flag"]?["key"] == "flag_0")
        let before = try #require(ProcessStatus(pid: pid))
        var latencies: [Duration] = []
        var cutAtRound: Int?
        let rounds = 40
        for round in 1...rounds {
            try daemon.writeFlags(Self.flags(round: round))
            // The second subscriber receives every change, whole and in order.
            let change = try reader.nextChange()
            #expect(change.revision == revision + 1)
            #expect(change.changed.count == 200 && change.changed.allSatisfy { $0.ruleId == "r_\(round)" })
            revision = change.revision
            let start = ContinuousClock.now
            let flag = try observer.call("get", ["key": "flag_7"], id: .number(Double(round)))?["result"]?["flag"]
            latencies.append(ContinuousClock.now - start)
            #expect(flag?["ruleId"] == .string("r_\(round)"))
            if cutAtRound == nil, daemon.log.contains("does not read its output") { cutAtRound = round }
        }
        let after = try #require(ProcessStatus(pid: pid))
        #expect(sluggard.isClosedByPeer())
        #expect(cutAtRound != nil, "the subscriber that never reads was not disconnected; log:\n\(daemon.log)")
        #expect(try observer.call("status")?["result"]?["connections"] == 2)
        // Each notification is ~220 KB and the limit 4 MiB: the cut comes after about twenty of them.
        #expect((cutAtRound ?? rounds) < 35)
        let sorted = latencies.sorted()
        let median = sorted[sorted.count / 2]
        let slowest = sorted[sorted.count - 1]
        #expect(slowest < .seconds(1), "get latencies \(sorted)")
        // Without the limit the daemon would hold ~9 MB for the sluggard by now; it holds none of it.
        let growth = after.anonymousKiB - before.anonymousKiB
        #expect(
            Sanitizer.isActive || growth < 24_000, "RssAnon grew by \(growth) KiB: before \(before), after \(after)")
        print(
            "slow subscriber: cut at round \(cutAtRound ?? -1) of \(rounds); daemon before \(before), after \(after);"
                + " get latency median \(median), max \(slowest)")
    }
}
