import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Refreshes nobody asked for (R8a-c): session starts, the interval, push registration.
@Suite(.hangLimit) struct AutomaticRefreshTests {
    @Test("R8a: Lifecycle=foreground requests flags when the daemon starts (a session start)")
    func r8aSessionStartAtDaemonStart() async throws {
        let rig = try PushwooshRig.start { $0.setDefaultReply(.flags([Fixtures.checkout]), for: "getFeatureFlags") }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let requests = try await server.waitForRequests(count: 1)
        #expect(requests[0].apiMethod == "getFeatureFlags")
        #expect(requests[0].httpMethod == "POST")
        #expect(requests[0].requestObject?["application"]?.stringValue == "ABCDE-12345")
        #expect(requests[0].requestObject?["hwid"]?.stringValue == "test-hwid")
        #expect(requests[0].requestObject?["userId"]?.stringValue == "test-hwid")
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let status = try session.result("status")
        #expect(status?["appState"]?.stringValue == "foreground")
        #expect(status?["sessionStartedAt"]?.isNull == false)
    }

    @Test("R8a: Lifecycle=client starts in the background; setAppState foreground starts a session and a refresh")
    func r8aClientForegroundStartsSession() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["Lifecycle": "client"])
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        let status = try session.result("status")
        #expect(status?["appState"]?.stringValue == "background")
        #expect(status?["sessionStartedAt"]?.isNull == true)
        #expect(server.requests.isEmpty)
        let answer = try session.result("setAppState", ["state": "foreground"])
        #expect(answer?["sessionStarted"]?.boolValue == true)
        _ = try await server.waitForRequests(count: 1)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        // A quick return from the background is the same session.
        _ = try session.result("setAppState", ["state": "background"])
        let again = try session.result("setAppState", ["state": "foreground"])
        #expect(again?["sessionStarted"]?.boolValue == false)
    }

    @Test(
        "R8a: Lifecycle=client starts a new session after SessionTimeout in the background",
        .disabled(if: Sanitizer.isActive, "an LD_PRELOAD shim under a sanitizer's interceptors; run without one"))
    func r8aClientLongBackground() async throws {
        let directory = try TemporaryDirectory()
        var suspend = try Suspend(in: directory)
        let rig = try PushwooshRig.start(
            featureFlags: ["Lifecycle": "client", "SessionTimeout": "300s"], directory: directory,
            environment: suspend.environment)
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        _ = try session.result("setAppState", ["state": "foreground"])
        _ = try await server.waitForRequests(count: 1)
        _ = try session.result("setAppState", ["state": "background"])
        // The rule is about time in the background itself: the device sleeps past SessionTimeout.
        try suspend.sleep(for: .seconds(301))
        let answer = try session.result("setAppState", ["state": "foreground"])
        #expect(answer?["sessionStarted"]?.boolValue == true)
        _ = try await server.waitForRequests(count: 2)
    }

    @Test("R8b: RefreshInterval refreshes again and again in the foreground, not faster")
    func r8bInterval() async throws {
        let clock = ContinuousClock()
        // Taken before the start, so that a late wake-up of this test can only make the span look longer.
        let start = clock.now
        let rig = try PushwooshRig.start(featureFlags: ["RefreshInterval": "400ms"])
        defer { rig.stop() }
        let server = rig.server
        _ = try await server.waitForRequests(count: 4, timeout: .seconds(10))
        // Three intervals of 400 ms separate the first request (at the start) from the fourth.
        #expect(clock.now - start >= .milliseconds(1150))
    }

    @Test("R8b: with Lifecycle=client the interval does not run in the background")
    func r8bNoIntervalInBackground() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["Lifecycle": "client", "RefreshInterval": "300ms"])
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        _ = try session.result("setAppState", ["state": "foreground"])
        _ = try await server.waitForRequests(count: 1)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        _ = try session.result("setAppState", ["state": "background"])
        let count = server.requests.count
        // The policy plans no refresh in the background: the interval does not run there.
        #expect(try session.result("status")?["nextRefreshAt"]?.isNull == true)
        #expect(server.requests.count == count)
        _ = try session.result("setAppState", ["state": "foreground"])
        _ = try await server.waitForRequests(count: count + 1)
    }

    @Test("R8c: pushRegistered starts a refresh")
    func r8cPushRegistered() async throws {
        let rig = try PushwooshRig.start {
            $0.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
            $0.setDefaultReply(.flags([Fixtures.checkout, Fixtures.search]), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let answer = try session.result("pushRegistered")
        #expect(answer?["refreshStarted"]?.boolValue == true)
        _ = try await server.waitForRequests(count: 2)
        #expect(try await Fixtures.waitForFlag("search_v2", on: session))
    }
}
