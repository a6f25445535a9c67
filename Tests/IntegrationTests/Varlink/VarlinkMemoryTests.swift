import FlagsCore
import Foundation
import TestSupport
import Testing

/// No memory is kept per Varlink call: each call that leaves the loop thread ends with its task, so 20,000 calls
/// of each kind leave the daemon's anonymous memory where it was.
@Suite(.hangLimit) struct VarlinkMemoryTests {
    static let calls = 20_000
    /// Calls sent before their replies are read: the connection carries them out one at a time, in order.
    static let batch = 200

    @Test func twentyThousandCallsOfEachKindKeepNoMemory() throws {
        let rig = try VarlinkRig()
        defer { rig.cleanUp() }
        let client = try rig.connect()
        let pid = rig.daemon.process.processIdentifier
        let kinds: [(String, JSONValue)] = [
            ("Refresh", [:]), ("LogImpression", ["key": "dark_mode"]), ("SetUserId", ["userId": "memory"]),
            ("SetAppState", ["state": "foreground"]), ("Get", ["key": "new_checkout"]),
        ]
        // A first round of each warms malloc's arenas and the caches, so that the baseline is the steady state.
        for (method, parameters) in kinds { _ = try #require(try client.call(method, parameters)?["parameters"]) }
        let before = try #require(ProcessStatus(pid: pid))
        for (method, parameters) in kinds {
            let message = VarlinkClient.message(method, parameters)
            var batchBytes: [UInt8] = []
            for _ in 0..<Self.batch { batchBytes += message }
            for _ in 0..<(Self.calls / Self.batch) {
                try client.send(batchBytes)
                for _ in 0..<Self.batch {
                    let reply = try #require(client.reply(), "\(method): no reply")
                    try #require(reply["error"] == nil, "\(method): \(reply)")
                }
            }
        }
        let after = try #require(ProcessStatus(pid: pid))
        print("Varlink memory: before \(before); after \(Self.calls) calls of each kind \(after)")
        #expect(
            Sanitizer.isActive || after.anonymousKiB - before.anonymousKiB <= 8 * 1024,
            "before \(before), after \(after)")
    }
}
