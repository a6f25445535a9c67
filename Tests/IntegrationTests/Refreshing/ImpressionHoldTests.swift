import FlagsCore
import Foundation
import TestSupport
import Testing

/// F3 when an impression's reply asks to wait: one hold, seen the same way by `status`, `explain`, the metrics
/// and the refresh policy, as when a flag reply asks it.
@Suite(.hangLimit) struct ImpressionHoldTests {
    @Test func anImpressionsRetryAfterIsOneHoldForEveryLayerAndWidensNoBackoff() async throws {
        let hold = 3.0
        // A wide RetryBackoff: a request the hold refused, taken for a failure, would wait most of ten minutes.
        let rig = try PushwooshRig.start(featureFlags: ["RetryBackoff": "10min", "DisableThrottle": "yes"]) {
            $0.setDefaultReply(.flags([Fixtures.checkout]), for: "getFeatureFlags")
            $0.enqueue(.retryAfter(503, value: String(Int(hold))), for: "postEvent")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        _ = try session.call("logImpression", ["key": "new_checkout"])
        _ = try await server.waitForRequests(count: 2)

        // The daemon has the 503 once status shows the hold; explain and the metrics show the same.
        #expect(
            await Eventually.wait { (try? session.result("status")?["heldUntil"]?.stringValue) != nil },
            "status.heldUntil never showed the impression's hold")
        let explain = try #require(try session.result("explain", ["key": "new_checkout"]))
        #expect(explain["heldUntil"]?.stringValue != nil, "\(explain)")
        let metrics = try #require(try session.result("metrics", ["format": "prometheus"])?["text"]?.stringValue)
        let held = metrics.split(separator: "\n").first { $0.hasPrefix("pwflagsd_refresh_held_seconds ") }
        let seconds = held.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
        #expect(seconds > 0 && seconds <= hold + 0.1, "\(held ?? "no gauge")")

        // A user change during the hold goes when the hold ends, not a backoff window later.
        let user = try #require(try session.result("setUserId", ["userId": "bob"]))
        #expect(user["heldUntil"]?.stringValue != nil, "\(user)")
        let requests = try await server.waitForRequests(count: 3, timeout: .seconds(20))
        #expect(requests[2].apiMethod == "getFeatureFlags")
        #expect(requests[2].requestObject?["userId"]?.stringValue == "bob")
        let timed = server.timedRequests
        let waited = timed[2].at - timed[1].at
        #expect(waited >= .milliseconds(Int((hold - 0.2) * 1000)), "bob's request came after \(waited)")
        #expect(try session.result("status")?["lastError"] == .null)
    }
}
