import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Failed refreshes (R11) and flags that outlive the server only until CacheMaxAge (R15).
@Suite struct RefreshFailureTests {
    init() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Starts a daemon whose first reply stores `new_checkout`, then makes the next refresh fail with `failure`
    /// (`nil`: the server is stopped) and checks the error's status and that the stored flag stays.
    func expectFailure(_ failure: FakeReply?, status: Int) async throws {
        let server = try FakePushwooshServer.start()
        server.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        if let failure { server.setDefaultReply(failure, for: "getFeatureFlags") }
        let daemon = try Fixtures.daemon(server, featureFlags: ["DisableThrottle": "yes"])
        defer {
            daemon.cleanUp()
            server.stop()
        }
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try Fixtures.waitForFlag("new_checkout", on: session))
        if failure == nil { server.stop() }
        let answer = try #require(try session.call("refresh"))
        #expect(answer["result"] == nil)
        #expect(answer["error"]?["code"]?.integerValue == -32000)
        #expect(answer["error"]?["data"]?["domain"]?.stringValue == "PWFeatureFlagsErrorDomain")
        #expect(answer["error"]?["data"]?["status"]?.integerValue == status)
        #expect(try session.get("new_checkout")?["ruleId"]?.stringValue == "r_1a2b3c4d")
        let lastError = try session.result("status")?["lastError"]
        #expect(lastError?["status"]?.integerValue == status)
        #expect(lastError?["at"]?.stringValue != nil)
    }

    @Test("R11: an HTTP 503 fails with status 503; the stored flags stay")
    func r11HTTPStatus() async throws {
        try await expectFailure(.status(503, body: "busy"), status: 503)
    }

    @Test("R11: a refused connection fails with status 0; the stored flags stay")
    func r11Refused() async throws {
        try await expectFailure(nil, status: 0)
    }

    @Test("R11: a garbage body with HTTP 200 fails with status 200; the stored flags stay")
    func r11Garbage() async throws {
        try await expectFailure(.raw("<html>not json</html>"), status: 200)
    }

    @Test("R11: a success clears status.lastError")
    func r11SuccessClearsLastError() async throws {
        let server = try FakePushwooshServer.start()
        server.enqueue(.status(500), for: "getFeatureFlags")
        server.setDefaultReply(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        let daemon = try Fixtures.daemon(server)
        defer {
            daemon.cleanUp()
            server.stop()
        }
        let session = try SocketSession(socketPath: daemon.socketPath)
        _ = try await server.waitForRequests(count: 1)
        #expect(try Eventually.wait { try session.result("status")?["lastError"]?["status"]?.integerValue == 500 })
        _ = try session.result("refresh")
        #expect(try session.result("status")?["lastError"]?.isNull == true)
    }

    @Test("R15: when the server cannot be reached the flags stay until CacheMaxAge, then go and listeners are told")
    func r15ExpiryWhenUnreachable() async throws {
        let server = try FakePushwooshServer.start()
        server.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        let clock = ContinuousClock()
        let start = clock.now
        let daemon = try Fixtures.daemon(server, featureFlags: ["CacheMaxAge": "1s", "RetryBackoff": "200ms"])
        defer {
            daemon.cleanUp()
            server.stop()
        }
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try Fixtures.waitForFlag("new_checkout", on: session))
        let fetched = clock.now
        server.stop()
        let listener = try SocketSession(socketPath: daemon.socketPath)
        let snapshot = try listener.result("listen")
        let stillThere = snapshot?["flags"]?.arrayValue?.first?["key"]?.stringValue
        #expect(stillThere == "new_checkout" || clock.now - fetched >= .seconds(1))
        let notification = listener.nextNotification(timeout: .seconds(5))
        #expect(notification?["params"]?["removed"]?.arrayValue == ["new_checkout"])
        // Not before CacheMaxAge: the fetch came after `start`.
        #expect(clock.now - start >= .milliseconds(950))
        #expect(try session.get("new_checkout")?.isNull == true)
        #expect(Eventually.wait { Fixtures.cacheText(daemon) == nil })
    }
}
