import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A new user never sees the previous user's flags (R8d).
@Suite(.hangLimit) struct UserChangeTests {
    @Test("R8d: after setUserId the old flags are gone at once, in memory and on disk, until the new ones arrive")
    func r8dOldFlagsNeverShown() async throws {
        let rig = try PushwooshRig.start {
            $0.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
            $0.enqueue(.delay(.milliseconds(500), then: .flags([Fixtures.search])), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(await Eventually.wait { Fixtures.cacheText(daemon)?.contains("new_checkout") == true })
        let listener = try SocketSession(socketPath: daemon.socketPath)
        _ = try listener.result("listen")

        let answer = try session.result("setUserId", ["userId": "alice"])
        #expect(answer?["userId"]?.stringValue == "alice")
        // Answered: nothing of the old user is left, while alice's reply is still on its way.
        #expect(try session.get("new_checkout")?.isNull == true)
        #expect(try session.keys().isEmpty)
        #expect(Fixtures.cacheText(daemon)?.contains("new_checkout") != true)
        #expect(try session.result("status")?["userId"]?.stringValue == "alice")

        let removal = listener.nextNotification()
        #expect(removal?["params"]?["removed"]?.arrayValue == ["new_checkout"])
        let arrival = listener.nextNotification()
        #expect(arrival?["params"]?["changed"]?.arrayValue?.first?["key"]?.stringValue == "search_v2")
        #expect(try session.get("search_v2")?.isNull == false)
        #expect(try session.get("new_checkout")?.isNull == true)

        let requests = try await server.waitForRequests(count: 2)
        #expect(requests[1].requestObject?["userId"]?.stringValue == "alice")
        #expect(requests[1].requestObject?["hwid"]?.stringValue == "test-hwid")
    }

    @Test("R8d: an answer for the previous user that arrives after the change is thrown away")
    func r8dLateAnswerForOldUser() async throws {
        let rig = try PushwooshRig.start {
            $0.enqueue(.delay(.milliseconds(400), then: .flags([Fixtures.checkout])), for: "getFeatureFlags")
            $0.enqueue(.delay(.milliseconds(800), then: .flags([Fixtures.search])), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        _ = try await server.waitForRequests(count: 1)
        _ = try session.result("setUserId", ["userId": "alice"])
        let requests = try await server.waitForRequests(count: 2)
        #expect(requests[1].requestObject?["userId"]?.stringValue == "alice")
        #expect(try await Fixtures.waitForFlag("search_v2", on: session))
        #expect(try session.get("new_checkout")?.isNull == true)
        #expect(Fixtures.cacheText(daemon)?.contains("new_checkout") != true)
    }

    @Test("R8d: setUserId back to \"\" uses the HWID again, and discards alice's flags")
    func r8dBackToHWID() async throws {
        let rig = try PushwooshRig.start { $0.setDefaultReply(.flags([Fixtures.checkout]), for: "getFeatureFlags") }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        _ = try session.result("setUserId", ["userId": "alice"])
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        // alice's reply arrived, so every earlier request did too; the next one is for the HWID.
        let before = server.requests.count
        let answer = try session.result("setUserId", ["userId": ""])
        #expect(answer?["userId"]?.stringValue == "test-hwid")
        #expect(try session.get("new_checkout")?.isNull == true)
        let requests = try await server.waitForRequests(count: before + 1)
        #expect(requests[before].requestObject?["userId"]?.stringValue == "test-hwid")
    }
}
