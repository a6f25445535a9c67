import FlagsCore
import Foundation
import TestSupport
import Testing

/// F3 with a real daemon: Pushwoosh's `Retry-After` holds every trigger back until it expires.
@Suite(.hangLimit) struct RetryAfterHoldTests {
    @Test(
        "A 503 with Retry-After holds refresh, setUserId and pushRegistered until it expires; then the next request goes",
        arguments: ["3", "http-date"])
    func retryAfterHoldsEveryTrigger(header: String) async throws {
        // An HTTP-date has whole seconds: 4 s ahead leaves at least 3 after the wall clock's fraction. The server
        // writes the date as it answers: one written before the rig started lost the start's time from the hold
        // (a start slowed by other suites in the process left less than the 3 s asserted below).
        let reply: FakeReply =
            header == "http-date" ? .retryAfterDate(503, secondsAhead: 4) : .retryAfter(503, value: header)
        let hold = 3.0
        // A short RetryBackoff: without the hold the automatic retry would come within 0.1 s.
        let rig = try PushwooshRig.start(featureFlags: ["RetryBackoff": "100ms", "DisableThrottle": "yes"]) {
            $0.enqueue(reply, for: "getFeatureFlags")
            $0.setDefaultReply(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        _ = try await server.waitForRequests(count: 1)
        let session = try SocketSession(socketPath: daemon.socketPath)
        let clock = ContinuousClock()
        // The daemon has the 503 once status shows the hold.
        #expect(await Eventually.wait { (try? session.result("status")?["heldUntil"]?.stringValue) != nil })
        let heldAt = clock.now

        let refresh = try #require(try session.call("refresh"))
        let message = refresh["error"]?["message"]?.stringValue ?? ""
        #expect(refresh["error"]?["data"]?["status"]?.integerValue == 0)
        #expect(message.contains("Retry-After") && message.contains("before 20"), "\(message)")
        let user = try #require(try session.result("setUserId", ["userId": "alice"]))
        #expect(user["userId"]?.stringValue == "alice")
        #expect(user["heldUntil"]?.stringValue != nil)
        _ = try session.result("pushRegistered")
        let explain = try #require(try session.result("explain", ["key": "new_checkout"]))
        #expect(explain["heldUntil"]?.stringValue != nil)
        let metrics = try #require(try session.result("metrics", ["format": "prometheus"])?["text"]?.stringValue)
        let held = metrics.split(separator: "\n").first { $0.hasPrefix("pwflagsd_refresh_held_seconds ") }
        let seconds = held.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
        #expect(seconds > 0 && seconds <= 4.1, "\(held ?? "no gauge")")
        #expect(server.requests.count == 1, "a request left during the hold")

        // The next request goes once the hold ends, for the new user, and brings the flags.
        let requests = try await server.waitForRequests(count: 2, timeout: .seconds(15))
        let timed = server.timedRequests
        let waited = (timed[1].at - timed[0].at)
        #expect(waited >= .milliseconds(Int((hold - 0.2) * 1000)), "the second request came after \(waited)")
        #expect(clock.now - heldAt < .seconds(10))
        #expect(requests[1].requestObject?["userId"]?.stringValue == "alice")
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(try session.result("status")?["heldUntil"]?.isNull != false)
    }

    @Test("F3: a flag request's Retry-After of an hour holds for CacheMaxAge at most; then the next request goes")
    func absurdRetryAfterOnAFlagRequestIsCapped() async throws {
        let rig = try PushwooshRig.start(featureFlags: [
            "CacheMaxAge": "3s", "RetryBackoff": "100ms", "DisableThrottle": "yes",
        ]) {
            $0.enqueue(.retryAfter(503, value: "3600"), for: "getFeatureFlags")
            $0.setDefaultReply(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        // Without the cap on every send the next request would wait an hour, and the device would have no flags.
        _ = try await server.waitForRequests(count: 2, timeout: .seconds(20))
        let timed = server.timedRequests
        #expect(timed[1].at - timed[0].at >= .milliseconds(2800), "the hold was shorter than CacheMaxAge")
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
    }

    @Test("F3: an impression's Retry-After of an hour holds for CacheMaxAge at most; then impressions go again")
    func absurdRetryAfterOnAnImpressionIsCapped() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["CacheMaxAge": "5s", "DisableThrottle": "yes"]) {
            $0.setDefaultReply(.flags([Fixtures.checkout]), for: "getFeatureFlags")
            $0.enqueue(.retryAfter(429, value: "3600"), for: "postEvent")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let impression: JSONValue = ["key": "new_checkout"]
        #expect(try session.result("logImpression", impression) == ["outcome": "failed", "status": 429])
        // The hold covers flag requests too, and the flags expire at CacheMaxAge (R15): a refresh goes, and
        // brings them back, only once the capped hold has passed.
        #expect(
            try await Eventually.wait(timeout: .seconds(20)) { try session.result("refresh")?["fromNetwork"] == true })
        #expect(try session.result("logImpression", impression)?["outcome"] == "sent")
        #expect(server.requests.filter { $0.apiMethod == "postEvent" }.count == 2)
    }
}
