import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The `refresh` method and what an update tells listeners (R9, R10, R12, R13, R14).
@Suite(.hangLimit) struct RefreshCallTests {
    @Test("R9: an identical response notifies no listener; a changed one notifies once")
    func r9OnlyChangesNotify() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["DisableThrottle": "yes"]) {
            $0.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
            $0.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
            $0.enqueue(.flags([Fixtures.checkout, Fixtures.search]), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let daemon = rig.daemon
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let listener = try SocketSession(socketPath: daemon.socketPath)
        let snapshot = try listener.result("listen")
        let revision = try #require(snapshot?["revision"]?.integerValue)

        let same = try session.result("refresh")
        #expect(same?["fromNetwork"]?.boolValue == true)
        #expect(same?["revision"]?.integerValue == revision)
        let changed = try session.result("refresh")
        #expect(changed?["revision"]?.integerValue == revision + 1)

        // Had the identical response notified, that notification would come first.
        let notification = listener.nextNotification()
        #expect(notification?["params"]?["revision"]?.integerValue == revision + 1)
        let keys = notification?["params"]?["changed"]?.arrayValue?.compactMap { $0["key"]?.stringValue }
        #expect(keys == ["search_v2"])
        #expect(notification?["params"]?["removed"]?.arrayValue == [])
        #expect(listener.nextNotification(timeout: .milliseconds(200)) == nil)
    }

    @Test("R10: inside RefreshThrottle a refresh answers from the stored flags and sends nothing")
    func r10Throttle() async throws {
        let rig = try PushwooshRig.start { $0.setDefaultReply(.flags([Fixtures.checkout]), for: "getFeatureFlags") }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        _ = try await server.waitForRequests(count: 1)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        for _ in 0..<3 {
            let answer = try session.result("refresh")
            #expect(answer?["fromNetwork"]?.boolValue == false)
            #expect(answer?["flags"]?.arrayValue?.first?["key"]?.stringValue == "new_checkout")
        }
        #expect(server.requests.count == 1)
    }

    @Test("R10: concurrent refreshes from several connections share one request")
    func r10ConcurrentRefreshesShareOneRequest() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["DisableThrottle": "yes"]) {
            $0.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
            $0.enqueue(.delay(.milliseconds(600), then: .flags([Fixtures.search])), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let clients = try (0..<4).map { _ in try RawClient(socketPath: daemon.socketPath) }
        for client in clients { try client.send(line: #"{"id":7,"method":"refresh"}"#) }
        for client in clients {
            let answer = client.readJSON()
            #expect(answer?["result"]?["fromNetwork"]?.boolValue == true)
            #expect(answer?["result"]?["flags"]?.arrayValue?.first?["key"]?.stringValue == "search_v2")
        }
        #expect(server.requests.count == 2)
    }

    @Test("R12: DisableThrottle=yes sends a request for every refresh")
    func r12DisableThrottle() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["DisableThrottle": "yes"])
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let before = server.requests.count
        for _ in 0..<3 {
            let answer = try session.result("refresh")
            #expect(answer?["fromNetwork"]?.boolValue == true)
        }
        #expect(server.requests.count == before + 3)
    }

    @Test("R13: a partial response is served, does not open the throttle window, and the next refresh asks again")
    func r13PartialDoesNotThrottle() async throws {
        let rig = try PushwooshRig.start {
            $0.enqueue(.flags([Fixtures.checkout], partial: true), for: "getFeatureFlags")
            $0.setDefaultReply(.flags([Fixtures.checkout, Fixtures.search]), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(try session.result("status")?["partial"]?.boolValue == true)
        let complete = try session.result("refresh")
        #expect(complete?["fromNetwork"]?.boolValue == true)
        #expect(try session.get("search_v2")?.isNull == false)
        #expect(try session.result("status")?["partial"]?.boolValue == false)
        #expect(await Eventually.wait { Fixtures.cacheText(daemon)?.contains("search_v2") == true })
        // The complete response opened the window.
        let throttled = try session.result("refresh")
        #expect(throttled?["fromNetwork"]?.boolValue == false)
        #expect(server.requests.count == 2)
    }

    @Test("R14: a killed flag arrives disabled, with ruleId \"\" and the default properties")
    func r14KilledFlag() async throws {
        let killed = Flag(key: "new_checkout", isEnabled: false, ruleId: "", properties: ["button_color": "grey"])
        let rig = try PushwooshRig.start(featureFlags: ["DisableThrottle": "yes"]) {
            $0.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
            $0.setDefaultReply(.flags([killed]), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let daemon = rig.daemon
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(try session.get("new_checkout")?["enabled"]?.boolValue == true)
        _ = try session.result("refresh")
        let flag = try session.get("new_checkout")
        #expect(flag?["enabled"]?.boolValue == false)
        #expect(flag?["ruleId"]?.stringValue == "")
        #expect(flag?["properties"]?["button_color"]?.stringValue == "grey")
        let enabled = try session.result("isEnabled", ["key": "new_checkout", "default": true])
        #expect(enabled?["enabled"]?.boolValue == false)
        #expect(enabled?["found"]?.boolValue == true)
    }
}
