import FlagsCore
import Foundation
import PushwooshAPI
import TestSupport
import Testing

@Suite("The client against a fake Pushwoosh server", .hangLimit)
struct PushwooshClientTests {
    static let token = "TOPSECRET-token-42"
    let common = CommonFields(applicationCode: "ABCDE-12345", hwid: "hw-1", userId: "user-1", version: "0.9.0")

    private func failure<T>(_ result: Result<T, PushwooshError>) -> PushwooshError? {
        guard case .failure(let error) = result else { return nil }
        return error
    }

    private func flagsStatus(
        _ reply: FakeReply, timeout: Duration = .seconds(5), token: String? = nil
    ) async throws -> PushwooshError? {
        let server = try FakePushwooshServer.start()
        defer { server.stop() }
        server.enqueue(reply)
        let client = PushwooshClient(apiToken: token, requestTimeout: timeout)
        return failure(await client.getFeatureFlags(base: server.baseURL, common: common))
    }

    @Test func fetchesFlagsAndSendsTheExactRequest() async throws {
        let server = try FakePushwooshServer.start()
        defer { server.stop() }
        let flag = Flag(key: "new_checkout", isEnabled: true, ruleId: "r_1", properties: ["max": 5, "on": true])
        server.enqueue(.flags([flag], partial: true, baseURL: "https://moved.example.com/json/1.3/"))
        let client = PushwooshClient(apiToken: Self.token, requestTimeout: .seconds(5))
        let reply = try await client.getFeatureFlags(base: server.baseURL, common: common).get()
        #expect(reply.flags == [flag])
        #expect(reply.partial)
        #expect(reply.baseURL?.absoluteString == "https://moved.example.com/json/1.3/")

        let request = try #require(try await server.waitForRequests(count: 1).first)
        #expect(request.httpMethod == "POST")
        #expect(request.path == "/json/1.3/getFeatureFlags")
        #expect(request.header("Content-Type") == "application/json; charset=utf-8")
        #expect(request.header("User-Agent") == "pwflagsd/0.9.0")
        #expect(request.header("Authorization") == "Token \(Self.token)")
        #expect(request.header("Cookie") == nil)
        let expected: JSONValue = [
            "request": ["application": "ABCDE-12345", "hwid": "hw-1", "userId": "user-1", "v": "0.9.0"]
        ]
        #expect(request.json == expected)
    }

    @Test func sendsNoAuthorizationWithoutAToken() async throws {
        let server = try FakePushwooshServer.start()
        defer { server.stop() }
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(5))
        _ = try await client.getFeatureFlags(base: server.baseURL, common: common).get()
        let request = try #require(try await server.waitForRequests(count: 1).first)
        #expect(request.header("Authorization") == nil)
    }

    @Test func postsAnImpressionAndSucceedsOnEnvelope200() async throws {
        let server = try FakePushwooshServer.start()
        defer { server.stop() }
        server.setDefaultReply(.ok, for: "postEvent")
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(5))
        let flag = Flag(key: "k", isEnabled: false, ruleId: "")
        let event = PushwooshEvent.impression(of: flag, date: Date(timeIntervalSince1970: 100), utcOffsetSeconds: 60)
        var deviceCommon = common
        deviceCommon.deviceType = 3
        _ = try await client.postEvent(base: server.baseURL, common: deviceCommon, event: event).get()
        let request = try #require(try await server.waitForRequests(count: 1).first)
        #expect(request.apiMethod == "postEvent")
        let fields = try #require(request.requestObject)
        #expect(fields["event"] == "PW_FeatureFlagImpression")
        #expect(fields["attributes"] == ["flag_key": "k", "rule_id": "", "enabled": false])
        #expect(fields["timestampUTC"] == 100)
        #expect(fields["timestampCurrent"] == 160)
        #expect(fields["device_type"] == 3)
    }

    @Test func repliesAreScriptedPerMethod() async throws {
        let server = try FakePushwooshServer.start()
        defer { server.stop() }
        server.enqueue(.status(503), for: "postEvent")
        server.enqueue(.flags([Flag(key: "a", isEnabled: true, ruleId: "default")]), for: "getFeatureFlags")
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(5))
        let flags = try await client.getFeatureFlags(base: server.baseURL, common: common).get()
        #expect(flags.flags.map(\.key) == ["a"])
        let event = PushwooshEvent(name: "e", attributes: [:], date: Date(), utcOffsetSeconds: 0)
        #expect(failure(await client.postEvent(base: server.baseURL, common: common, event: event))?.status == 503)
        #expect(server.requests.map(\.apiMethod) == ["getFeatureFlags", "postEvent"])
    }

    @Test func httpStatusOtherThan200IsReported() async throws {
        #expect(try await flagsStatus(.status(503, body: "down"))?.status == 503)
        #expect(try await flagsStatus(.status(401))?.status == 401)
    }

    @Test func unusableRepliesOverHTTP200HaveStatus200() async throws {
        #expect(try await flagsStatus(.raw("<html>garbage"))?.status == 200)
        #expect(try await flagsStatus(.envelopeStatus(210))?.status == 200)
        #expect(try await flagsStatus(.raw(#"{"status_code":200,"response":{"flags":"x"}}"#))?.status == 200)
    }

    @Test func eventFailsOnAnEnvelopeError() async throws {
        let server = try FakePushwooshServer.start()
        defer { server.stop() }
        server.enqueue(.envelopeStatus(210))
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(5))
        let event = PushwooshEvent(name: "e", attributes: [:], date: Date(), utcOffsetSeconds: 0)
        #expect(failure(await client.postEvent(base: server.baseURL, common: common, event: event))?.status == 200)
    }

    @Test func refusedConnectionHasStatus0() async throws {
        let server = try FakePushwooshServer.start()
        let base = server.baseURL
        server.stop()
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(5))
        #expect(failure(await client.getFeatureFlags(base: base, common: common))?.status == 0)
    }

    @Test func droppedOrResetConnectionHasStatus0() async throws {
        #expect(try await flagsStatus(.drop)?.status == 0)
        #expect(try await flagsStatus(.resetMidBody)?.status == 0)
    }

    @Test func hungServerTimesOutWithStatus0WithinTheRequestTimeout() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let error = try await flagsStatus(.hang, timeout: .milliseconds(300))
        let elapsed = clock.now - start
        #expect(error?.status == 0)
        #expect(elapsed >= .milliseconds(250))
        #expect(elapsed < .seconds(2))
    }

    @Test func anUpdatedTimeoutBoundsTheNextExchange() async throws {
        let server = try FakePushwooshServer.start()
        defer { server.stop() }
        server.setDefaultReply(.hang)
        // A reload changes RequestTimeout on the client in use, without a new client.
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(30))
        client.update(requestTimeout: .milliseconds(300))
        #expect(client.requestTimeout == .milliseconds(300))
        let clock = ContinuousClock()
        let start = clock.now
        let error = failure(await client.getFeatureFlags(base: server.baseURL, common: common))
        #expect(error?.status == 0)
        #expect(clock.now - start < .seconds(5))
    }

    @Test func timeoutBoundsTheWholeExchangeNotIdleTime() async throws {
        // A byte every 50 ms never lets an idle timer fire, yet the whole reply would take 10 s.
        let clock = ContinuousClock()
        let start = clock.now
        let error = try await flagsStatus(.drip(bytes: 200, interval: .milliseconds(50)), timeout: .milliseconds(400))
        #expect(error?.status == 0)
        #expect(clock.now - start < .seconds(2))
    }

    @Test func slowReplyWithinTheTimeoutSucceeds() async throws {
        #expect(try await flagsStatus(.delay(.milliseconds(100), then: .flags([])), timeout: .seconds(5)) == nil)
    }

    @Test func replyOverEightMiBIsCancelledAsUnusable() async throws {
        let server = try FakePushwooshServer.start()
        defer { server.stop() }
        server.enqueue(.huge(bytes: 50 * 1024 * 1024))
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(20))
        let error = failure(await client.getFeatureFlags(base: server.baseURL, common: common))
        #expect(error == .unusable("reply over 8 MiB", kind: .tooLarge))
    }

    @Test func replyJustUnderTheLimitIsRead() async throws {
        #expect(try await flagsStatus(.huge(bytes: 8 * 1024 * 1024), timeout: .seconds(20)) == nil)
    }

    @Test func redirectIsNotFollowedAndReportsItsStatus() async throws {
        let server = try FakePushwooshServer.start()
        defer { server.stop() }
        server.enqueue(.redirect(to: "\(server.baseURL.absoluteString)elsewhere", status: 307))
        let client = PushwooshClient(apiToken: Self.token, requestTimeout: .seconds(5))
        #expect(failure(await client.getFeatureFlags(base: server.baseURL, common: common))?.status == 307)
        #expect(server.requests.count == 1)
    }

    @Test func httpsToAPlainHTTPPortHasStatus0() async throws {
        let server = try FakePushwooshServer.start()
        defer { server.stop() }
        let base = try #require(URL(string: "https://127.0.0.1:\(server.port)/json/1.3/"))
        let client = PushwooshClient(apiToken: Self.token, requestTimeout: .seconds(5))
        let clock = ContinuousClock()
        let start = clock.now
        let error = failure(await client.getFeatureFlags(base: base, common: common))
        #expect(error?.status == 0)
        // A TLS failure, not the timeout.
        #expect(clock.now - start < .seconds(4))
    }

    @Test(arguments: [FakeReply.status(500, body: token), .hang, .drop, .raw(token)])
    func tokenNeverAppearsInErrors(reply: FakeReply) async throws {
        let error = try #require(try await flagsStatus(reply, timeout: .milliseconds(500), token: Self.token))
        for text in [error.reason, error.description, String(describing: error), "\(error)"] {
            #expect(!text.contains(Self.token))
        }
    }

    @Test func redactionRemovesTheTokenFromAnyReason() async throws {
        // A server echoing the token in status_message must not get it into the log.
        let body = #"{"status_code":500,"status_message":"bad token \#(Self.token)"}"#
        let error = try #require(try await flagsStatus(.raw(body), token: Self.token))
        #expect(error.status == 200)
        #expect(!error.description.contains(Self.token))
        #expect(error.reason.contains("<redacted>"))
    }
}
