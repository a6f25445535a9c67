import Dispatch
import FeatureFlags
import FeatureFlagsCompat
import FlagsCore
import Foundation
import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// refresh() and refresh(completion:) against a Pushwoosh-backed daemon on the fake server (R10, R11).
@Suite(.hangLimit) struct ClientLibraryRefreshTests {
    static let checkout = Flag(key: "new_checkout", isEnabled: true, ruleId: "r_1", properties: ["max_items": 5])

    static func startDaemon(_ server: FakePushwooshServer) throws -> DaemonProcess {
        try DaemonProcess(
            config: """
                [Pushwoosh]
                ApplicationCode=ABCDE-12345
                ServerURL=\(server.baseURL)
                [FeatureFlags]
                DisableThrottle=yes
                """
        )
    }

    @Test(
        "R11: a failed refresh throws PWFeatureFlagsErrorDomain with the status as code",
        arguments: [(FakeReply.status(503), 503), (FakeReply.raw("garbage"), 200)])
    func refreshErrorCarriesTheStatus(reply: FakeReply, code: Int) async throws {
        let rig = try PushwooshRig.start(daemon: Self.startDaemon) { $0.setDefaultReply(reply, for: "getFeatureFlags") }
        defer { rig.stop() }
        let daemon = rig.daemon
        let flags = FeatureFlags(socketPath: daemon.socketPath)
        defer { flags.stop() }
        await #expect {
            try await flags.refresh()
        } throws: { error in
            let nsError = error as NSError
            return nsError.domain == PWFeatureFlagsErrorDomain && nsError.code == code
        }
    }

    @Test("refresh(completion:) runs on the given queue with the NSError of R11")
    func completionRunsOnTheGivenQueue() async throws {
        let rig = try PushwooshRig.start(daemon: Self.startDaemon) {
            $0.setDefaultReply(.status(503), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let daemon = rig.daemon
        let flags = FeatureFlags(socketPath: daemon.socketPath)
        defer { flags.stop() }
        let queue = DispatchQueue(label: "test.refresh")
        let code: Int? = await withCheckedContinuation { continuation in
            flags.refresh(queue: queue) { error in
                dispatchPrecondition(condition: .onQueue(queue))
                continuation.resume(
                    returning: error.map { $0 as NSError }.map { $0.domain == PWFeatureFlagsErrorDomain ? $0.code : -1 }
                )
            }
        }
        #expect(code == 503)
    }

    @Test("After a successful refresh the mirror already shows its flags")
    func refreshedFlagsAreInTheMirror() async throws {
        let rig = try PushwooshRig.start(daemon: Self.startDaemon) {
            $0.setDefaultReply(.status(503), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let flags = FeatureFlags(socketPath: daemon.socketPath)
        defer { flags.stop() }
        #expect(await flags.waitForFirstSnapshot(timeout: .seconds(15)))
        // The start's own request must be over first: a refresh during it would share it and its 503 (R10).
        let status = try RawClient(socketPath: daemon.socketPath)
        #expect(
            try await Eventually.wait {
                try status.request(#"{"id":1,"method":"status"}"#)?["result"]?["lastError"]?["status"] == 503
            })
        server.setDefaultReply(.flags([Self.checkout]), for: "getFeatureFlags")
        try await flags.refresh()
        #expect(flags.get("new_checkout")?.number(forProperty: "max_items", default: 3) == 5)
        // The daemon reports the age of Pushwoosh flags: fetchedAt + CacheMaxAge (24 h).
        let remaining = try #require(flags.expiresAt).timeIntervalSinceNow
        #expect(remaining > 24 * 3600 - 120 && remaining <= 24 * 3600 + 1)
    }
}
