import FlagsCore
import Foundation
import TestSupport
import Testing

/// A flag whose key is long and whose properties are many reads as key length x properties bytes of OFREP
/// evaluations: the listener bounds what one bulk answer may cost and keeps answering everyone else.
@Suite(.hangLimit) struct OFREPAmplificationTests {
    /// A 57 KB `setOverride` line: a 30,000-byte key and 3,000 one-number properties, about 180 MB as evaluations.
    static func amplifying(_ index: Int) -> JSONValue {
        var properties: [String: JSONValue] = [:]
        for number in 0..<3000 { properties["p\(number)"] = .number(1) }
        return [
            "key": .string(String(index) + String(repeating: "k", count: 30_000)), "properties": .object(properties),
        ]
    }

    @Test func anAmplifiedBulkAnswerIsRefusedWhileSinglesAndMemoryStayBounded() throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let session = try SocketSession(socketPath: rig.daemon.socketPath)
        let before = Measure.memory(of: rig.daemon.process.processIdentifier).anon
        for index in 0..<3 { _ = try session.result("setOverride", Self.amplifying(index)) }
        // Refused, not built: the memory bound below shows the 180 MB answer never existed (no timed bound,
        // which a loaded machine fails).
        let bulk = try rig.post(OFREPRig.bulk)
        #expect(bulk?.status == 500)
        #expect(bulk?.json?["errorDetails"]?.stringValue?.contains("/ofrep/v1/evaluate/flags/{key}") == true)
        let single = try rig.post(OFREPRig.single("new_checkout.max_items"))
        #expect(single?.status == 200)
        #expect(single?.json?["value"] == 3)
        let grown = Measure.memory(of: rig.daemon.process.processIdentifier).anon - before
        // A sanitizer's quarantine keeps freed memory resident (250 MiB seen under ASan): the bound is for plain
        // builds, where the refused answer is never built whole.
        if !Sanitizer.isActive { #expect(grown < 160 * 1024, "the daemon grew by \(grown) KiB") }
        #expect(try session.result("clearOverride", ["all": true])?["cleared"]?.arrayValue?.count == 3)
        let after = try rig.post(OFREPRig.bulk)
        #expect(after?.status == 200)
        #expect(after?.json?["flags"]?.arrayValue?.count == 3 + 4)
        try rig.expectStillServing()
    }
}
