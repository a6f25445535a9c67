import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Talking to Pushwoosh (docs/behaviour.md): an address kept in the state directory by an earlier `base_url` move is
/// where the daemon calls after a restart, if it is https and was kept for the same application code.
///
/// Without `ServerURL` the daemon calls https addresses, which a test cannot serve; but libcurl sends https
/// through `$https_proxy` with a `CONNECT host:port` line, so a fake server standing in as the proxy sees which
/// host the daemon chose. Following a `base_url` in a reply is covered by the unit tests of the acceptance
/// rule (PushwooshEndpoint, PushwooshEnvelope, BaseAddress): a reply over https cannot be faked here.
@Suite(.hangLimit) struct BaseURLTests {
    static let config = """
        [Pushwoosh]
        ApplicationCode=ABCDE-12345
        HWID=test-hwid
        [FeatureFlags]
        DisableThrottle=yes
        """

    /// Starts the daemon with `kept` as the kept address, its https calls going to `proxy`.
    static func daemon(keeping kept: String, proxy: FakePushwooshServer) throws -> DaemonProcess {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.file("state"), withIntermediateDirectories: true)
        try kept.write(toFile: directory.file("state/base-url"), atomically: true, encoding: .utf8)
        let address = "http://127.0.0.1:\(proxy.port)"
        return try DaemonProcess(
            config: config, directory: directory,
            environment: ["https_proxy": address, "HTTPS_PROXY": address, "no_proxy": "", "NO_PROXY": ""])
    }

    static func kept(_ code: String, _ url: String) -> String {
        JSONValue.object(["applicationCode": .string(code), "baseURL": .string(url)]).serialized()
    }

    @Test("A kept https address of the same application is where the daemon calls after a restart")
    func keptAddressOfTheSameApplicationIsUsed() async throws {
        let proxy = try PushwooshRig.server()
        defer { proxy.stop() }
        proxy.setDefaultReply(.status(403))
        let daemon = try Self.daemon(
            keeping: Self.kept("ABCDE-12345", "https://eu.pushwoosh.test/json/1.3/"), proxy: proxy)
        defer { daemon.cleanUp() }
        let first = try #require(try await proxy.waitForRequests(count: 1).first)
        #expect(first.httpMethod == "CONNECT")
        #expect(first.path == "eu.pushwoosh.test:443")
    }

    @Test("A kept address of another application is not used: the daemon calls its own default address")
    func keptAddressOfAnotherApplicationIsNotUsed() async throws {
        let proxy = try PushwooshRig.server()
        defer { proxy.stop() }
        proxy.setDefaultReply(.status(403))
        let daemon = try Self.daemon(
            keeping: Self.kept("FGHIJ-67890", "https://eu.pushwoosh.test/json/1.3/"), proxy: proxy)
        defer { daemon.cleanUp() }
        let first = try #require(try await proxy.waitForRequests(count: 1).first)
        #expect(first.httpMethod == "CONNECT")
        #expect(first.path == "ABCDE-12345.api.pushwoosh.com:443")
    }

    @Test(
        "A kept plain http address is not used, whether kept bare (older versions) or with its application",
        arguments: [false, true])
    func keptHTTPAddressIsNotUsed(withApplication: Bool) async throws {
        let proxy = try PushwooshRig.server()
        let plain = try PushwooshRig.server()
        defer {
            proxy.stop()
            plain.stop()
        }
        proxy.setDefaultReply(.status(403))
        let url = plain.baseURL.absoluteString
        let daemon = try Self.daemon(keeping: withApplication ? Self.kept("ABCDE-12345", url) : url, proxy: proxy)
        defer { daemon.cleanUp() }
        let first = try #require(try await proxy.waitForRequests(count: 1).first)
        #expect(first.path == "ABCDE-12345.api.pushwoosh.com:443")
        // A refresh of its own: had the daemon taken the http address, this request would reach `plain`.
        let client = try RawClient(socketPath: daemon.socketPath)
        #expect(try client.request(#"{"id":1,"method":"refresh"}"#)?["error"] != nil)
        #expect(plain.requests.isEmpty)
    }
}
