import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A flag set larger than `MaxPendingBytes` (the upstream limit is 8 MiB, the default bound 4 MiB) is served
/// whole to a client that reads, while a client that does not read is still cut off.
@Suite struct LargeFlagSetTests {
    init() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// 20 flags with a property of 300 KB each: about 6 MB listed, under the 8 MiB file and reply limits.
    static func flags(round: Int = 0) -> [Flag] {
        let blob = String(repeating: String(UnicodeScalar(UInt8(97 + round % 26))), count: 300_000)
        return (0..<20).map { index in
            Flag(key: "big_\(index)", isEnabled: true, ruleId: "r_\(round)", properties: ["blob": .string(blob)])
        }
    }

    @Test func getAllListenAndTheCLIListTheWholeSixMegabyteSet() throws {
        let daemon = try DaemonProcess.serving(Self.flags())
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        // The fast path (a plain request) and the general path (a member it does not know) alike.
        for line in [#"{"id":1,"method":"getAll"}"#, #"{"jsonrpc":"2.0","id":2,"method":"getAll","params":{}}"#] {
            let listing = try #require(try client.request(line)?["result"]?["flags"]?.arrayValue, "\(daemon.log)")
            #expect(listing.count == 20)
            #expect(listing.allSatisfy { $0["properties"]?["blob"]?.stringValue?.utf8.count == 300_000 })
        }
        let subscriber = try daemon.connect()
        let listed = try subscriber.listing("listen")
        #expect(listed.flags.count == 20 && listed.subscription != nil)
        let outcome = try CLI.run(["--socket", daemon.socketPath, "list", "--json"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.utf8.count > 6_000_000)
        #expect((0..<20).allSatisfy { outcome.stdout.contains("big_\($0)") })
        #expect(try client.call("status")?["result"]?["connections"] == 2)
        #expect(!daemon.log.contains("does not read its output"), "\(daemon.log)")
    }

    @Test func aClientThatAsksManyListingsAtOnceAndThenReadsGetsEveryOne() throws {
        let daemon = try DaemonProcess.serving(Self.flags())
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        // Ten listings asked in one write: 60 MB of answers, read only once all are asked.
        try client.send(Array((1...10).map { #"{"id":\#($0),"method":"getAll"}"# + "\n" }.joined().utf8))
        for id in 1...10 {
            let answer = try #require(client.readJSON(timeout: .seconds(20)), "answer \(id); log:\n\(daemon.log)")
            #expect(answer["id"] == .number(Double(id)))
            #expect(answer["result"]?["flags"]?.arrayValue?.count == 20)
        }
    }

    @Test func aSubscriberThatDoesNotReadTheBigSetIsStillCutOff() throws {
        let daemon = try DaemonProcess.serving(Self.flags())
        defer { daemon.cleanUp() }
        let pid = daemon.process.processIdentifier
        let sluggard = try daemon.connect()
        try sluggard.send(line: #"{"id":1,"method":"listen"}"#)
        let reader = try daemon.connect()
        var revision = try reader.listing("listen").revision
        let before = try #require(ProcessStatus(pid: pid))
        var cutAtRound: Int?
        for round in 1...8 {
            try daemon.writeFlags(Self.flags(round: round))
            let change = try reader.nextChange(timeout: .seconds(20))
            #expect(change.revision == revision + 1 && change.changed.count == 20)
            revision = change.revision
            if cutAtRound == nil, daemon.log.contains("does not read its output") { cutAtRound = round }
        }
        let after = try #require(ProcessStatus(pid: pid))
        #expect(sluggard.isClosedByPeer(timeout: .seconds(20)))
        // The listing in flight, one set and MaxPendingBytes behind it: cut by the third change or so.
        #expect((cutAtRound ?? 99) <= 4, "cut at \(cutAtRound ?? -1); log:\n\(daemon.log)")
        let growth = after.anonymousKiB - before.anonymousKiB
        #expect(Sanitizer.isActive || growth < 80_000, "RssAnon grew by \(growth) KiB: \(before) -> \(after)")
    }
}
