import Dispatch
import FlagsCore
import Foundation
import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Pushwoosh is protected from local callers: R10 counts the requests sent, failed or not, and no loop
/// of local calls sends more than about one request a second, while a user change still goes within a second.
@Suite(.hangLimit) struct UpstreamProtectionTests {
    static func flagRequests(_ server: FakePushwooshServer) -> [RecordedRequest] {
        server.requests.filter { $0.apiMethod == "getFeatureFlags" }
    }

    @Test("R10: with valid stored flags and a failing upstream, 20 refresh calls past RefreshThrottle send 1 request")
    func r10FailedRequestsOpenTheWindow() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["RefreshThrottle": "1s"]) {
            $0.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
            $0.setDefaultReply(.status(503, body: "busy"), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let fetched = ContinuousClock.now
        // The rule is about the window itself: let RefreshThrottle pass since the last success.
        try await Task.sleep(until: fetched + .milliseconds(1100))
        let first = try #require(try session.call("refresh"))
        #expect(first["error"]?["data"]?["status"]?.integerValue == 503)
        for _ in 1..<20 {
            let answer = try session.result("refresh")
            #expect(answer?["fromNetwork"]?.boolValue == false)
            #expect(answer?["flags"]?.arrayValue?.first?["key"]?.stringValue == "new_checkout")
        }
        #expect(Self.flagRequests(server).count == 2)
    }

    @Test(
        "A flood of setUserId, setAppState, refresh and pushRegistered from four connections sends about one request a second; the last user's flags arrive within a second"
    )
    func controlFloodIsBounded() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["Lifecycle": "client", "SessionTimeout": "10ms"])
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        _ = try session.result("setAppState", ["state": "foreground"])
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let before = Self.flagRequests(server).count
        let path = daemon.socketPath
        let calls: [@Sendable (Int) -> String] = [
            { (n: Int) in #"{"id":1,"method":"setUserId","params":{"userId":"user-a\#(n % 5)"}}"# },
            { (n: Int) in #"{"id":1,"method":"setUserId","params":{"userId":"user-b\#(n % 5)"}}"# },
            { (n: Int) in
                n % 2 == 0
                    ? #"{"id":1,"method":"refresh"}"#
                    : #"{"id":1,"method":"setAppState","params":{"state":"\#(n % 4 == 1 ? "background" : "foreground")"}}"#
            },
            { (_: Int) in #"{"id":1,"method":"pushRegistered"}"# },
        ]
        let end = ContinuousClock.now + .seconds(3)
        let answered = Locked(0)
        let group = DispatchGroup()
        for call in calls {
            DispatchQueue.global().async(group: group) {
                guard let client = try? RawClient(socketPath: path) else { return }
                var n = 0
                while ContinuousClock.now < end {
                    guard (try? client.request(call(n))) != nil else { return }
                    answered.withLock { $0 += 1 }
                    n += 1
                }
            }
        }
        await withCheckedContinuation { continuation in
            group.notify(queue: .global()) { continuation.resume() }
        }
        let during = Self.flagRequests(server).count - before
        let lastChange = ContinuousClock.now
        #expect(try session.result("setUserId", ["userId": "final-user"])?["userId"]?.stringValue == "final-user")
        let arrived = try await Eventually.wait(timeout: .seconds(3)) {
            try session.get("new_checkout")?.isNull == false
        }
        let delay = ContinuousClock.now - lastChange
        let total = Self.flagRequests(server).count - before
        print("control flood: \(answered.withLock { $0 }) calls in 3 s, \(during) requests; final user after \(delay)")
        #expect(answered.withLock { $0 } > 40)
        #expect(during <= 4, "\(during) requests during a 3 s flood")
        // After the flood: the final user's request, and at most one more that was already due (spaced a second
        // after the last) when the flood's calls ended.
        #expect(total <= during + 2)
        #expect(arrived)
        #expect(delay < .milliseconds(1500), "the final user's flags came \(delay) after the change")
        #expect(Self.flagRequests(server).last?.requestObject?["userId"]?.stringValue == "final-user")
    }
    @Test("Impressions are bounded: 40 at once send 30, the rest answer failed with status 0 and go later")
    func impressionsAreBounded() async throws {
        let flags = (0..<40).map { Flag(key: "flag_\($0)", isEnabled: true, ruleId: "r_\($0)") }
        let rig = try PushwooshRig.start { $0.setDefaultReply(.flags(flags), for: "getFeatureFlags") }
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("flag_39", on: session))
        var outcomes: [String] = []
        let started = ContinuousClock.now
        for flag in flags {
            let result = try session.result("logImpression", ["key": .string(flag.key)])
            outcomes.append(result?["outcome"]?.stringValue ?? "none")
            if result?["outcome"] == "failed" { #expect(result?["status"]?.integerValue == 0) }
        }
        let sent = outcomes.filter { $0 == "sent" }.count
        let events = { server.requests.filter { $0.apiMethod == "postEvent" }.count }
        // 30 at once, then one a second: a slow machine (a sanitizer) may see a token or two more.
        let seconds = Int((ContinuousClock.now - started).components.seconds)
        #expect((30...31 + seconds).contains(sent), "\(outcomes)")
        #expect(events() == sent)
        let heldBack = try #require(flags.indices.last { outcomes[$0] == "failed" })
        // R18: the held-back impression is sent by a later logImpression, once the bound allows.
        let answered = try await Eventually.wait(timeout: .seconds(3)) {
            try session.result("logImpression", ["key": .string(flags[heldBack].key)])?["outcome"] == "sent"
        }
        #expect(answered)
        #expect(daemon.log.contains("impressions are held back"))
    }
}
