import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A flag set larger than `MaxPendingBytes` (the upstream limit is 8 MiB, the default bound 4 MiB) is served
/// whole to a client that reads, while a client that does not read is still cut off.
@Suite(.hangLimit) struct LargeFlagSetTests {
    /// 20 flags with a property of 300 KB each: about 6 MB listed, under the 8 MiB file and reply limits.
    static func flags(round: Int = 0) -> [Flag] {
        (0..<20).map { index in
            Flag(key: "big_\(index)", isEnabled: true, ruleId: "r_\(round)", properties: ["blob": .string(blob(round))])
        }
    }

    static func blob(_ round: Int) -> String {
        String(repeating: String(UnicodeScalar(UInt8(97 + round % 26))), count: 300_000)
    }

    /// The flags file of `flags(round:)`, written as text: the tests are built without optimisation, and
    /// JSON trees of megabytes would make them slow without testing anything more.
    static func fileText(round: Int) -> String {
        let blob = blob(round)
        let entries = (0..<20).map { index in
            #"{"key":"big_\#(index)","enabled":true,"rule_id":"r_\#(round)","properties":{"blob":"\#(blob)"}}"#
        }
        return #"{"flags":["# + entries.joined(separator: ",") + #"],"partial":false}"#
    }

    /// Checks a listing line (a result or a notification) without parsing megabytes: every flag of the round is
    /// in it, whole.
    static func holdsEveryFlag(_ line: String?, round: Int = 0) -> Bool {
        guard let line, line.utf8.count > 6_000_000, line.hasSuffix("}") else { return false }
        let blob = blob(round)
        return (0..<20).allSatisfy { index in
            line.contains(
                #"{"key":"big_\#(index)","enabled":true,"ruleId":"r_\#(round)","properties":{"blob":"\#(blob)"},"source":"file"}"#
            )
        }
    }

    @Test func getAllListenAndTheCLIListTheWholeSixMegabyteSet() throws {
        let directory = try TemporaryDirectory()
        try directory.write(LocalFlags.fileName, Self.fileText(round: 0))
        let daemon = try DaemonProcess(config: LocalFlags.config(in: directory), directory: directory)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let epoch = try #require(try client.call("status")?["result"]?["epoch"]?.stringValue)
        let reader = try LineClient(path: daemon.socketPath, receiveTimeout: .seconds(60))
        // The fast path (a plain request) and the general path (a member it does not know) alike.
        for (id, line) in [
            (1, #"{"id":1,"method":"getAll"}"#), (2, #"{"jsonrpc":"2.0","id":2,"method":"getAll","params":{}}"#),
        ] {
            try reader.send(Array((line + "\n").utf8))
            let answer = reader.readText()
            #expect(
                answer?.hasPrefix(#"{"jsonrpc":"2.0","id":\#(id),"result":{"epoch":"\#(epoch)","revision":1,"flags":["#)
                    == true)
            #expect(Self.holdsEveryFlag(answer), "\(answer?.utf8.count ?? 0) bytes; log:\n\(daemon.log)")
        }
        // refresh answers with the list too, after the source re-read the file: the same flag bytes, then fromNetwork.
        try reader.send(Array(#"{"id":3,"method":"refresh"}"#.utf8) + [10])
        let refreshed = reader.readText()
        #expect(
            refreshed?.hasPrefix(#"{"jsonrpc":"2.0","id":3,"result":{"epoch":"\#(epoch)","revision":1,"flags":["#)
                == true)
        #expect(refreshed?.hasSuffix(#"],"fromNetwork":false}}"#) == true)
        #expect(Self.holdsEveryFlag(refreshed))
        let subscriber = try LineClient(path: daemon.socketPath, receiveTimeout: .seconds(60))
        try subscriber.send(Array(#"{"id":1,"method":"listen"}"#.utf8) + [10])
        let listed = subscriber.readText()
        #expect(listed?.hasPrefix(#"{"jsonrpc":"2.0","id":1,"result":{"subscription":"#) == true)
        #expect(Self.holdsEveryFlag(listed))
        let outcome = try CLI.run(["--socket", daemon.socketPath, "list"], timeout: .seconds(60))
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect((0..<20).allSatisfy { outcome.stdout.contains("big_\($0)") }, "\(outcome.stdout.prefix(500))")
        #expect(try client.call("status")?["result"]?["connections"] == 3)
        #expect(!daemon.log.contains("does not read its output"), "\(daemon.log)")
    }

    @Test func aClientThatAsksManyListingsAtOnceAndThenReadsGetsEveryOne() throws {
        let directory = try TemporaryDirectory()
        try directory.write(LocalFlags.fileName, Self.fileText(round: 0))
        let daemon = try DaemonProcess(config: LocalFlags.config(in: directory), directory: directory)
        defer { daemon.cleanUp() }
        let client = try LineClient(path: daemon.socketPath, receiveTimeout: .seconds(60))
        // Ten listings asked in one write: 60 MB of answers, read only once all are asked.
        try client.send(Array((1...10).map { #"{"id":\#($0),"method":"getAll"}"# + "\n" }.joined().utf8))
        for id in 1...10 {
            let answer = client.readText()
            #expect(answer?.hasPrefix(#"{"jsonrpc":"2.0","id":\#(id),"result""#) == true, "log:\n\(daemon.log)")
            #expect(answer?.utf8.count ?? 0 > 6_000_000)
        }
        #expect(!daemon.log.contains("does not read its output"), "\(daemon.log)")
    }

    @Test func aSubscriberThatDoesNotReadTheBigSetIsStillCutOff() throws {
        let directory = try TemporaryDirectory()
        try directory.write(LocalFlags.fileName, Self.fileText(round: 0))
        let daemon = try DaemonProcess(config: LocalFlags.config(in: directory), directory: directory)
        defer { daemon.cleanUp() }
        let pid = daemon.process.processIdentifier
        let sluggard = try daemon.connect()
        try sluggard.send(line: #"{"id":1,"method":"listen"}"#)
        let reader = try LineClient(path: daemon.socketPath, receiveTimeout: .seconds(60))
        try reader.send(Array(#"{"id":1,"method":"listen"}"#.utf8) + [10])
        #expect(Self.holdsEveryFlag(reader.readText()))
        let before = try #require(ProcessStatus(pid: pid))
        var cutAtRound: Int?
        for round in 1...6 {
            try daemon.writeFlagsFile(Self.fileText(round: round))
            // The subscriber that reads gets every change whole.
            let change = reader.readText()
            #expect(change?.hasPrefix(#"{"jsonrpc":"2.0","method":"flagsChanged","#) == true)
            #expect(change?.contains(#""revision":\#(round + 1),"#) == true)
            #expect(Self.holdsEveryFlag(change, round: round))
            if cutAtRound == nil, daemon.log.contains("does not read its output") { cutAtRound = round }
        }
        let after = try #require(ProcessStatus(pid: pid))
        #expect(sluggard.isClosedByPeer(timeout: .seconds(20)))
        // The listing in flight, one set and MaxPendingBytes behind it: cut by the third change or so.
        #expect((cutAtRound ?? 99) <= 3, "cut at \(cutAtRound ?? -1); log:\n\(daemon.log)")
        let growth = after.anonymousKiB - before.anonymousKiB
        print("big set, slow subscriber: cut at round \(cutAtRound ?? -1); daemon \(before) -> \(after)")
        // A few snapshots of 6 MB (each kept as flags, encoded flags and the listing) at most.
        #expect(Sanitizer.isActive || growth < 160_000, "RssAnon grew by \(growth) KiB: \(before) -> \(after)")
    }
}
