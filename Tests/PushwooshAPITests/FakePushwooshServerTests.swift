import FlagsCore
import PushwooshAPI
import TestSupport
import Testing

@Suite("The fake Pushwoosh server itself", .hangLimit)
struct FakePushwooshServerTests {
    let common = CommonFields(applicationCode: "ABCDE", hwid: "hw", userId: "hw", version: "1")

    @Test func waitingForMoreRequestsThanArriveTimesOut() async throws {
        let server = try FakePushwooshServer.start()
        defer { server.stop() }
        await #expect(throws: FakeServerError.timedOut(expected: 1, received: 0)) {
            try await server.waitForRequests(count: 1, timeout: .milliseconds(100))
        }
    }

    @Test func stopEndsAHungExchange() async throws {
        let server = try FakePushwooshServer.start()
        server.enqueue(.hang)
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(30))
        let base = server.baseURL
        let common = common
        async let result = client.getFeatureFlags(base: base, common: common)
        _ = try await server.waitForRequests(count: 1)
        let clock = ContinuousClock()
        let start = clock.now
        server.stop()
        guard case .failure(let error) = await result else {
            Issue.record("a hung exchange cut by stop() cannot succeed")
            return
        }
        #expect(error.status == 0)
        #expect(clock.now - start < .seconds(5))
    }

    @Test func queuedRepliesAreUsedInOrderThenTheDefault() async throws {
        let server = try FakePushwooshServer.start()
        defer { server.stop() }
        server.setDefaultReply(.status(404))
        server.enqueue(.flags([Flag(key: "a", isEnabled: true, ruleId: "default")]))
        server.enqueue(.status(503))
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(5))
        var statuses: [Int] = []
        for _ in 0..<3 {
            switch await client.getFeatureFlags(base: server.baseURL, common: common) {
            case .success: statuses.append(200)
            case .failure(let error): statuses.append(error.status)
            }
        }
        #expect(statuses == [200, 503, 404])
        #expect(try await server.waitForRequests(count: 3).count == 3)
    }
}
