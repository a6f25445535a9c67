import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Memory that subscribers who never read made the daemon queue goes back to the system once they are gone.
@Suite(.hangLimit) struct MemoryReturnTests {
    @Test func memoryQueuedForSubscribersWhoNeverReadIsGivenBackOnceTheyAreCut() async throws {
        let daemon = try DaemonProcess.serving(SlowSubscriberTests.flags(round: 0))
        defer { daemon.cleanUp() }
        let pid = daemon.process.processIdentifier
        let before = try #require(ProcessStatus(pid: pid))
        // Subscriptions to different chosen keys get notifications of their own (those of the same keys share
        // one): listening to all 200 keys but one, a different one each, each connection queues its own ~220 KB
        // a change, until MaxPendingBytes cuts it.
        var sluggards: [RawClient] = []
        for index in 0..<20 {
            let keys = JSONValue.array((0..<200).filter { $0 != index }.map { .string("flag_\($0)") })
            let sluggard = try daemon.connect()
            _ = try #require(try sluggard.call("listen", ["keys": keys]))
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
        print("memory return: before \(before); peak \(peak)")
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

    /// What a crowd of clients at once leaves behind. Each `refresh` answer is the whole listing (about 220 KB
    /// here), queued until its client reads it, and malloc kept what the crowd freed when it had gone: 150 MB of
    /// 156 MB for 500 such clients, before `MemoryReturn` counted connections as well as single large queues. A
    /// subscriber stays connected throughout, as an app's does.
    ///
    /// The crowd is 1,000, and must make the daemon grow by 8 MB: since callers of `refresh` share their reads of
    /// the file, each holds only what of its answer the socket has not taken (about 23 KB), where it held a parsed
    /// copy of the file as well, and 300 made the daemon grow by 8 MB instead of more than 32. The daemon now also
    /// trims while the crowd fills, once malloc holds 4 MiB more free memory than after its last trim: the
    /// release build under CI's load peaked at 11.4 MB (25 to 30 MB on the debug build). Under a sanitizer, where
    /// memory figures mean nothing and only the paths are checked, the crowd is 100: 1,000 took almost 4 minutes.
    static let crowdSize = Sanitizer.isActive ? 100 : 1_000

    @Test func aCrowdOfClientsThatCameAtOnceIsGivenBackOnceGone() async throws {
        Measure.raiseFileLimit()
        let daemon = try DaemonProcess.serving(
            SlowSubscriberTests.flags(round: 0), extra: "[Daemon]\nMaxConnections=4096\n")
        defer { daemon.cleanUp() }
        let pid = daemon.process.processIdentifier
        let subscriber = try daemon.connect()
        _ = try #require(try subscriber.call("listen", [:]))
        let before = try #require(ProcessStatus(pid: pid))
        // All sent before any answer is read, so that the answers are queued together.
        var crowd: [RawClient] = []
        for _ in 0..<Self.crowdSize {
            let client = try RawClient(socketPath: daemon.socketPath)
            try client.send(line: #"{"jsonrpc":"2.0","id":1,"method":"refresh"}"#)
            crowd.append(client)
        }
        var peak = before
        // The answers are queued as the daemon gets to them: on a loaded machine that takes a while, and reading
        // before it has would let the crowd drain as it fills (one CI run peaked at 12.6 MB that way).
        _ = await Eventually.wait(timeout: .seconds(30)) {
            if let now = ProcessStatus(pid: pid), now.anonymousKiB > peak.anonymousKiB { peak = now }
            return Sanitizer.isActive || peak.anonymousKiB - before.anonymousKiB > 8_000
        }
        for client in crowd {
            #expect(client.readLine(timeout: .seconds(60)) != nil, "a client of the crowd got no answer")
            if let now = ProcessStatus(pid: pid), now.anonymousKiB > peak.anonymousKiB { peak = now }
        }
        let grown = peak.anonymousKiB - before.anonymousKiB
        try #require(Sanitizer.isActive || grown > 8_000, "the crowd made the daemon grow by \(grown) KiB only")
        crowd.removeAll()
        var after = peak
        let returned = await Eventually.wait(timeout: .seconds(10)) {
            after = ProcessStatus(pid: pid) ?? after
            return after.anonymousKiB - before.anonymousKiB < grown / 4
        }
        #expect(Sanitizer.isActive || returned, "RssAnon: before \(before), peak \(peak), after the crowd \(after)")
        #expect(try subscriber.call("get", ["key": "flag_7"])?["result"] != nil, "the subscriber lost its connection")
        print("memory return, a crowd: before \(before); peak \(peak); after \(after)")
    }
}
