import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Reading flags never waits for Pushwoosh (R3), and a plan without flags reads as defaults (R5).
@Suite(.hangLimit) struct ReadingTests {
    @Test("R3: get answers at once from the stored flags while the server stalls")
    func r3GetDoesNotWaitForTheNetwork() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["DisableThrottle": "yes"]) {
            $0.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
            $0.setDefaultReply(.hang, for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        // A refresh from another connection now hangs on the server.
        let (session, refresher, _) = try await Fixtures.refreshHeld(on: daemon, by: server)
        defer { withExtendedLifetime(refresher) {} }
        try Self.expectAnswersAtOnce(on: session) { flag in
            #expect(flag?["enabled"]?.boolValue == true)
            let missing = try session.get("unknown")
            #expect(missing?.isNull == true)
        }
    }

    /// Gets `new_checkout` twenty times, each answered far below a hanging request's 10 s, and checks each
    /// answer with `check`.
    static func expectAnswersAtOnce(on session: SocketSession, check: (JSONValue?) throws -> Void) throws {
        let clock = ContinuousClock()
        // A sanitizer build or an emulated daemon on a busy machine needs more room.
        let bound: Duration = Sanitizer.isActive || Emulation.isActive ? .milliseconds(500) : .milliseconds(50)
        for _ in 0..<20 {
            let start = clock.now
            let flag = try session.get("new_checkout")
            #expect(clock.now - start < bound)
            try check(flag)
        }
    }

    @Test("R3: before any answer, get returns null at once")
    func r3GetWithoutFlagsIsNull() async throws {
        let rig = try PushwooshRig.start { $0.setDefaultReply(.hang, for: "getFeatureFlags") }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        _ = try await server.waitForRequests(count: 1)
        let session = try SocketSession(socketPath: daemon.socketPath)
        try Self.expectAnswersAtOnce(on: session) { #expect($0?.isNull == true) }
    }

    @Test("R5: a plan without feature flags (flags: []) reads null, and isEnabled gives the default")
    func r5PlanWithoutFlags() async throws {
        let rig = try PushwooshRig.start { $0.setDefaultReply(.flags([]), for: "getFeatureFlags") }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        _ = try await server.waitForRequests(count: 1)
        #expect(try await Eventually.wait { try session.result("status")?["fetchedAt"]?.isNull == false })
        #expect(try session.get("new_checkout")?.isNull == true)
        #expect(try session.keys().isEmpty)
        let enabled = try session.result("isEnabled", ["key": "new_checkout", "default": true])
        #expect(enabled?["enabled"]?.boolValue == true)
        #expect(enabled?["found"]?.boolValue == false)
        let disabled = try session.result("isEnabled", ["key": "new_checkout", "default": false])
        #expect(disabled?["enabled"]?.boolValue == false)
    }
}
