import FlagsCore
import TestSupport
import Testing

/// The daemon against local TLS servers signed by a throw-away CA: the system store alone by default,
/// `CAFile` trusted besides it, the proxy variables honoured, the default address sent elsewhere for tests,
/// and every failure told by its kind in `status`, `explain`, the log and the metrics.
@Suite("The daemon's HTTPS to Pushwoosh", .hangLimit)
struct TLSUpstreamTests {
    static let token = "TOPSECRET-token-77"

    /// A daemon fetching from `serverURL` (the default address when nil) with `pushwoosh` keys and a token.
    private func daemon(
        serverURL: String?, pushwoosh: [String: String] = [:], environment: [String: String] = [:]
    ) throws -> DaemonProcess {
        let directory = try TemporaryDirectory()
        try directory.write("token", Self.token)
        var text = "[Pushwoosh]\nApplicationCode=ABCDE-12345\nHWID=test-hwid\nAPITokenFile=\(directory.file("token"))\n"
        if let serverURL { text += "ServerURL=\(serverURL)\n" }
        for (key, value) in pushwoosh.sorted(by: { $0.key < $1.key }) { text += "\(key)=\(value)\n" }
        text += "[FeatureFlags]\nRefreshInterval=1h\nRefreshThrottle=1h\nRetryBackoff=1h\n"
        // No proxy from the test's own environment, unless a test sets one.
        var env = ["https_proxy": "", "http_proxy": "", "all_proxy": "", "HTTPS_PROXY": "", "ALL_PROXY": ""]
        env.merge(environment) { $1 }
        return try DaemonProcess(config: text, directory: directory, environment: env)
    }

    private func lastError(_ daemon: DaemonProcess) async throws -> StatusErrorView? {
        let session = try SocketSession(socketPath: daemon.socketPath)
        var found: StatusErrorView?
        _ = try await Eventually.wait {
            let error = try session.result("status")?["lastError"]
            found = error.flatMap(StatusErrorView.init)
            return found != nil
        }
        return found
    }

    struct StatusErrorView {
        var status: Int
        var kind: String
        var reason: String

        init?(_ json: JSONValue) {
            guard let status = json["status"]?.integerValue, let kind = json["kind"]?.stringValue,
                let reason = json["reason"]?.stringValue
            else { return nil }
            self.status = status
            self.kind = kind
            self.reason = reason
        }
    }

    @Test func anUntrustedCertificateIsRefusedAndStatusExplainLogAndMetricsSayTLS() async throws {
        let authority = try TestCertificateAuthority()
        let server = try TLSTestServer.start(certificate: try authority.issue())
        defer { server.stop() }
        let daemon = try daemon(serverURL: server.base().absoluteString)
        defer { daemon.cleanUp() }
        let error = try #require(try await lastError(daemon))
        #expect(error.status == 0)
        #expect(error.kind == "tls")
        #expect(error.reason.contains("certificate"))
        let session = try SocketSession(socketPath: daemon.socketPath)
        let explained = try session.result("explain", ["key": "new_checkout"])?["lastError"]
        #expect(explained?["kind"]?.stringValue == "tls")
        let metrics = try #require(try session.result("metrics", ["format": "prometheus"])?["text"]?.stringValue)
        #expect(metrics.contains(#"pwflagsd_refresh_failures_total{reason="tls"} 1"#))
        #expect(daemon.log.contains("refresh failed (tls)"))
        for text in [daemon.log, metrics, error.reason] { #expect(!text.contains(Self.token)) }
        #expect(server.events.filter { $0.hasPrefix("REQUEST") }.isEmpty)
    }

    @Test func aCertificateSignedByCAFileIsTrusted() async throws {
        let authority = try TestCertificateAuthority()
        let server = try TLSTestServer.start(certificate: try authority.issue())
        defer { server.stop() }
        let daemon = try daemon(
            serverURL: server.base().absoluteString, pushwoosh: ["CAFile": authority.certificatePath])
        defer { daemon.cleanUp() }
        #expect(server.events("REQUEST", atLeast: 1).first?.hasPrefix("REQUEST POST /json/1.3/getFeatureFlags") == true)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Eventually.wait { try session.result("status")?["fetchedAt"]?.stringValue != nil })
        #expect(try session.result("status")?["lastError"] == .null)
    }

    @Test func theDefaultAddressGoesWherePWFLAGSD_TEST_CONNECT_TOSends() throws {
        let authority = try TestCertificateAuthority()
        let server = try TLSTestServer.start(certificate: try authority.issue())
        defer { server.stop() }
        let daemon = try daemon(
            serverURL: nil, pushwoosh: ["CAFile": authority.certificatePath],
            environment: ["PWFLAGSD_TEST_CONNECT_TO": "ABCDE-12345.api.pushwoosh.com:443:127.0.0.1:\(server.port)"])
        defer { daemon.cleanUp() }
        let request = try #require(server.events("REQUEST", atLeast: 1).first)
        #expect(request == "REQUEST POST /json/1.3/getFeatureFlags ABCDE-12345.api.pushwoosh.com cookie=no")
    }

    @Test func theHTTPSProxyVariableIsHonoured() throws {
        let authority = try TestCertificateAuthority()
        let server = try TLSTestServer.start(certificate: try authority.issue())
        defer { server.stop() }
        var settings = TLSTestServer.Settings()
        settings.proxy = true
        let proxy = try TLSTestServer.start(settings)
        defer { proxy.stop() }
        let daemon = try daemon(
            serverURL: server.base().absoluteString, pushwoosh: ["CAFile": authority.certificatePath],
            environment: ["https_proxy": "http://127.0.0.1:\(proxy.port)", "no_proxy": "", "NO_PROXY": ""])
        defer { daemon.cleanUp() }
        #expect(proxy.events("CONNECT ", atLeast: 1) == ["CONNECT localhost:\(server.port)"])
        #expect(server.events("REQUEST", atLeast: 1).count == 1)
    }

    @Test func aRefusedConnectionIsTold() async throws {
        let server = try TLSTestServer.start()
        let base = server.base(tls: false).absoluteString
        server.stop()
        let daemon = try daemon(serverURL: base)
        defer { daemon.cleanUp() }
        let error = try #require(try await lastError(daemon))
        #expect(error.kind == "connect")
    }
}
