import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Keys compare by their exact characters (R2): no case folding, and no Unicode canonical equivalence either.
@Suite(.hangLimit) struct ExactKeyTests {
    /// "café" with a precomposed é (U+00E9) and with an e and a combining acute accent (U+0301).
    static let precomposed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test func aDecomposedKeyDoesNotReadTheFlagStoredPrecomposed() throws {
        let daemon = try DaemonProcess.serving([Flag(key: Self.precomposed, isEnabled: true, ruleId: "r_pre")])
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        // The fast path (raw UTF-8) and the general path (an escape) alike.
        #expect(
            try client.request(#"{"id":1,"method":"get","params":{"key":"\#(Self.decomposed)"}}"#)?["result"] == [
                "flag": nil
            ])
        #expect(
            try client.request(#"{"id":2,"method":"get","params":{"key":"cafe\u0301"}}"#)?["result"] == ["flag": nil])
        #expect(
            try client.request(
                #"{"id":3,"method":"isEnabled","params":{"key":"\#(Self.decomposed)","default":false}}"#)?[
                    "result"] == ["enabled": false, "found": false])
        let flag = try client.request(#"{"id":4,"method":"get","params":{"key":"caf\u00e9"}}"#)?["result"]?["flag"]
        #expect(flag?["ruleId"] == "r_pre")
    }

    @Test func bothFormsAreDistinctFlagsListedAndNotifiedOnTheirOwn() throws {
        let both = [
            Flag(key: Self.precomposed, isEnabled: true, ruleId: "r_pre"),
            Flag(key: Self.decomposed, isEnabled: false, ruleId: "r_de"),
        ]
        let daemon = try DaemonProcess.serving(both)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        #expect(try client.call("get", ["key": .string(Self.precomposed)])?["result"]?["flag"]?["ruleId"] == "r_pre")
        #expect(try client.call("get", ["key": .string(Self.decomposed)])?["result"]?["flag"]?["ruleId"] == "r_de")
        #expect(try client.listing("getAll").flags.map(\.ruleId).sorted() == ["r_de", "r_pre"])
        let watcher = try daemon.connect()
        let listed = try watcher.listing("listen", ["keys": [.string(Self.decomposed)]])
        #expect(listed.flags.map(\.ruleId) == ["r_de"])
        // A change of the precomposed flag alone is not the watcher's; the decomposed one is.
        try daemon.writeFlags([Flag(key: Self.precomposed, isEnabled: false, ruleId: "r_pre2"), both[1]])
        try daemon.writeFlags([both[0], Flag(key: Self.decomposed, isEnabled: true, ruleId: "r_de2")])
        let change = try watcher.nextChange()
        #expect(change.changed.map(\.ruleId) == ["r_de2"], "\(change)")
        #expect(change.removed.isEmpty)
    }
}
