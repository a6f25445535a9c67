import FlagsCore
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The local flags file is read by inotify, by `refresh` and by the refresher (a user change, a session start):
/// reads that race each other must never put back content the file no longer holds.
@Suite(.hangLimit) struct LocalFileOrderTests {
    /// The flag whose rule id carries the edit's number.
    static func flag(_ version: Int) -> Flag {
        Flag(key: "v", isEnabled: true, ruleId: "r\(version)")
    }

    /// Tells the racing thread when to stop, and lets the test wait for it.
    final class Race: Sendable {
        let stopping = Atomic<Bool>(false)
        let finished = DispatchSemaphore(value: 0)
        let calls = Atomic<Int>(0)
        static let threads = 2
    }

    @Test("Rapid edits with re-reads racing them: the served flag never goes back to an older edit")
    func rereadsNeverRevert() async throws {
        let edits = 3000
        let daemon = try DaemonProcess.serving([Self.flag(0)], extra: "[FeatureFlags]\nDisableThrottle=yes\n")
        defer { daemon.cleanUp() }
        let listener = try daemon.connect()
        #expect(try listener.call("listen", ["keys": ["v"]])?["result"] != nil)

        // Re-reads that race the edits: user changes make the refresher read the file, and `refresh` reads it.
        let race = Race()
        let socketPath = daemon.socketPath
        for racer in 0..<Race.threads {
            Thread {
                defer { race.finished.signal() }
                guard let client = try? RawClient(socketPath: socketPath) else { return }
                var round = racer
                while !race.stopping.load(ordering: .relaxed) {
                    _ = try? client.call("setUserId", ["userId": .string("u\(round % 2)")], timeout: .seconds(5))
                    _ = try? client.call("refresh", timeout: .seconds(5))
                    race.calls.add(2, ordering: .relaxed)
                    round += 1
                }
            }.start()
        }
        for version in 1...edits {
            try daemon.writeFlags([Self.flag(version)])
        }
        let reader = try daemon.connect()
        let settled = await Eventually.wait(timeout: .seconds(10)) {
            (try? reader.call("get", ["key": "v"]))?["result"]?["flag"]?["ruleId"] == .string("r\(edits)")
        }
        race.stopping.store(true, ordering: .relaxed)
        for _ in 0..<Race.threads {
            #expect(race.finished.wait(timeout: .now() + 60) == .success, "a racing client never ended")
        }
        #expect(settled)
        #expect(race.calls.load(ordering: .relaxed) > 0)

        // Every notification the listener got, in order: the versions only grow, and the last is the last edit.
        var versions: [Int] = []
        while let change = listener.readNotification(timeout: .milliseconds(500)) {
            for flag in change["changed"]?.arrayValue ?? [] {
                if let ruleId = flag["ruleId"]?.stringValue, let version = Int(ruleId.dropFirst()) {
                    versions.append(version)
                }
            }
        }
        #expect(versions == versions.sorted(), "went back: \(Self.reversals(in: versions))")
        #expect(versions.last == edits)
        #expect(try reader.call("get", ["key": "v"])?["result"]?["flag"]?["ruleId"] == .string("r\(edits)"))
    }

    /// The places where a version followed a newer one, for the failure message.
    static func reversals(in versions: [Int]) -> [String] {
        zip(versions, versions.dropFirst()).filter { $0.1 < $0.0 }.map { "\($0.0) → \($0.1)" }
    }
}
