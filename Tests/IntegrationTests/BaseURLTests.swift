import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// UPSTREAM.md: a `base_url` in a successful reply moves later calls, and the move survives a restart.
///
/// Without `ServerURL` the daemon calls `https://{ApplicationCode}.api.pushwoosh.com/…`, which a test cannot
/// reach; so the test starts from an address kept in the state directory by an earlier move, which the daemon
/// uses exactly as it would its own.
@Suite struct BaseURLTests {
    init() {
        signal(SIGPIPE, SIG_IGN)
    }

    @Test("Without ServerURL, base_url from a successful reply moves later calls, also after a restart")
    func followsBaseURL() async throws {
        let first = try FakePushwooshServer.start()
        let second = try FakePushwooshServer.start()
        defer {
            first.stop()
            second.stop()
        }
        let flag = Flag(key: "a", isEnabled: true, ruleId: "r1")
        first.setDefaultReply(.flags([flag], baseURL: second.baseURL.absoluteString), for: "getFeatureFlags")
        second.setDefaultReply(.flags([flag]), for: "getFeatureFlags")
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.file("state"), withIntermediateDirectories: true)
        try first.baseURL.absoluteString.write(
            toFile: directory.file("state/base-url"), atomically: true, encoding: .utf8)
        let config = """
            [Pushwoosh]
            ApplicationCode=ABCDE-12345
            HWID=test-hwid
            [FeatureFlags]
            DisableThrottle=yes
            """
        let daemon = try DaemonProcess(config: config, directory: directory)
        _ = try await first.waitForRequests(count: 1)
        let client = try RawClient(socketPath: daemon.socketPath)
        // The first refresh may share the start's request; the second is sure to be a request of its own.
        #expect(try client.request(#"{"id":1,"method":"refresh"}"#)?["result"]?["fromNetwork"] == true)
        #expect(try client.request(#"{"id":2,"method":"refresh"}"#)?["result"]?["fromNetwork"] == true)
        let moved = second.requests.count
        #expect(moved >= 1)
        #expect(first.requests.count == 1)
        daemon.stop()

        let restarted = try DaemonProcess(config: config, directory: directory)
        defer { restarted.cleanUp() }
        _ = try await second.waitForRequests(count: moved + 1)
        #expect(first.requests.count == 1)
        let kept = try String(contentsOfFile: directory.file("state/base-url"), encoding: .utf8)
        #expect(kept == second.baseURL.absoluteString)
    }

    @Test("A failed reply's base_url is never followed")
    func failedReplyDoesNotMove() async throws {
        let first = try FakePushwooshServer.start()
        let second = try FakePushwooshServer.start()
        defer {
            first.stop()
            second.stop()
        }
        let envelope = FakeReply.envelope(response: ["flags": []], baseURL: second.baseURL.absoluteString)
        var failed = envelope.objectValue ?? [:]
        failed["status_code"] = 210
        first.setDefaultReply(.raw(JSONValue.object(failed).serialized()), for: "getFeatureFlags")
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.file("state"), withIntermediateDirectories: true)
        try first.baseURL.absoluteString.write(
            toFile: directory.file("state/base-url"), atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(
            config: "[Pushwoosh]\nApplicationCode=ABCDE-12345\n[FeatureFlags]\nDisableThrottle=yes\n",
            directory: directory)
        defer { daemon.cleanUp() }
        let client = try RawClient(socketPath: daemon.socketPath)
        #expect(try client.request(#"{"id":1,"method":"refresh"}"#)?["error"]?["data"]?["status"] == 200)
        #expect(try client.request(#"{"id":2,"method":"refresh"}"#)?["error"]?["data"]?["status"] == 200)
        #expect(second.requests.isEmpty)
    }
}
