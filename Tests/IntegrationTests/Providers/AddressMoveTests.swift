import FlagsCore
import Foundation
import TestSupport
import Testing

/// Talking to Pushwoosh (docs/behaviour.md), against local TLS servers signed by a throw-away CA that the daemon trusts
/// through `CAFile`: a `base_url` is followed from a failed reply in Pushwoosh's envelope, JSON that is not the
/// envelope sends the daemon back to the default address, a moved address that fails for longer than
/// `CacheMaxAge` is dropped, `ServerURL` ignores every move, and an http `base_url` is never followed. The default
/// address reaches a local server through `PWFLAGSD_TEST_CONNECT_TO`.
@Suite("Following Pushwoosh's address moves", .hangLimit)
struct AddressMoveTests {
    static let code = "ABCDE-12345"

    let authority: TestCertificateAuthority
    let certificate: TestCertificateAuthority.Certificate

    init() throws {
        authority = try TestCertificateAuthority()
        certificate = try authority.issue()
    }

    /// A TLS server answering every request with `status` and `body`.
    func server(status: Int = 200, body: String? = nil) throws -> TLSTestServer {
        var settings = TLSTestServer.Settings()
        settings.status = status
        if let body { settings.body = body }
        return try TLSTestServer.start(settings, certificate: certificate)
    }

    /// A TLS server answering every request with a 503 in Pushwoosh's envelope whose `base_url` is `target`.
    func movingServer(to target: URL) throws -> TLSTestServer {
        try server(status: 503, body: #"{"status_code":503,"status_message":"Moved","base_url":"\#(target)"}"#)
    }

    /// A daemon whose default address goes to `defaultServer`, with `kept` in its state directory's `base-url`.
    func daemon(
        defaultServer: TLSTestServer, serverURL: String? = nil, kept: String? = nil, cacheMaxAge: String = "1h"
    ) throws -> DaemonProcess {
        let directory = try TemporaryDirectory()
        if let kept {
            try FileManager.default.createDirectory(atPath: directory.file("state"), withIntermediateDirectories: true)
            try kept.write(toFile: directory.file("state/base-url"), atomically: true, encoding: .utf8)
        }
        var text = "[Pushwoosh]\nApplicationCode=\(Self.code)\nHWID=test-hwid\nCAFile=\(authority.certificatePath)\n"
        if let serverURL { text += "ServerURL=\(serverURL)\n" }
        text += "[FeatureFlags]\nRefreshInterval=1h\nRetryBackoff=1s\nCacheMaxAge=\(cacheMaxAge)\n"
        let environment = [
            "https_proxy": "", "http_proxy": "", "all_proxy": "", "HTTPS_PROXY": "", "ALL_PROXY": "",
            "PWFLAGSD_TEST_CONNECT_TO": "\(Self.code).api.pushwoosh.com:443:127.0.0.1:\(defaultServer.port)",
        ]
        return try DaemonProcess(config: text, directory: directory, environment: environment)
    }

    static func requests(_ server: TLSTestServer) -> Int {
        server.events.filter { $0.hasPrefix("REQUEST") }.count
    }

    static func keptFile(_ daemon: DaemonProcess) -> String? {
        try? String(contentsOfFile: daemon.directory.file("state/base-url"), encoding: .utf8)
    }

    static func kept(_ url: URL) -> String {
        #"{"applicationCode":"\#(code)","baseURL":"\#(url.absoluteString)"}"#
    }

    @Test func aFailedReplyInPushwooshsEnvelopeMovesTheDaemon() throws {
        let moved = try server()
        defer { moved.stop() }
        let home = try movingServer(to: moved.base())
        defer { home.stop() }
        let daemon = try daemon(defaultServer: home)
        defer { daemon.cleanUp() }
        #expect(moved.events("REQUEST", atLeast: 1).first?.hasPrefix("REQUEST POST /json/1.3/getFeatureFlags") == true)
        #expect(Self.requests(home) == 1)
        #expect(Self.keptFile(daemon)?.contains(moved.base().absoluteString) == true)
        #expect(daemon.log.contains("Pushwoosh moved this application to another address"))
    }

    @Test func jsonThatIsNotTheEnvelopeSendsTheDaemonBackToTheDefaultAddress() throws {
        let moved = try server(status: 502, body: #"{"message":"Bad gateway"}"#)
        defer { moved.stop() }
        let home = try server()
        defer { home.stop() }
        let daemon = try daemon(defaultServer: home, kept: Self.kept(moved.base()))
        defer { daemon.cleanUp() }
        let request = try #require(home.events("REQUEST", atLeast: 1).first)
        #expect(request == "REQUEST POST /json/1.3/getFeatureFlags \(Self.code).api.pushwoosh.com cookie=no")
        #expect(Self.requests(moved) == 1)
        #expect(Self.keptFile(daemon) == nil)
        #expect(daemon.log.contains("not Pushwoosh's envelope"))
    }

    @Test func aMovedAddressFailingLongerThanCacheMaxAgeIsDropped() async throws {
        // Not JSON: the reply says nothing about the address, so only the time failing can drop it.
        let moved = try server(status: 503, body: "<html>Service Unavailable</html>")
        defer { moved.stop() }
        let home = try server()
        defer { home.stop() }
        let daemon = try daemon(defaultServer: home, kept: Self.kept(moved.base()), cacheMaxAge: "3s")
        defer { daemon.cleanUp() }
        #expect(await Eventually.wait(timeout: .seconds(40)) { Self.requests(home) >= 1 })
        // The first failures came within CacheMaxAge and kept the address; a later one dropped it.
        #expect(Self.requests(moved) >= 2)
        #expect(Self.keptFile(daemon) == nil)
        #expect(daemon.log.contains("the moved address has failed for longer than CacheMaxAge"))
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Eventually.wait { try session.result("status")?["fetchedAt"]?.stringValue != nil })
    }

    @Test func serverURLIgnoresEveryMove() throws {
        let elsewhere = try server()
        defer { elsewhere.stop() }
        let configured = try movingServer(to: elsewhere.base())
        defer { configured.stop() }
        let home = try server()
        defer { home.stop() }
        let daemon = try daemon(defaultServer: home, serverURL: configured.base().absoluteString)
        defer { daemon.cleanUp() }
        #expect(configured.events("REQUEST", atLeast: 2).count >= 2)
        #expect(Self.requests(elsewhere) == 0)
        #expect(Self.requests(home) == 0)
        #expect(Self.keptFile(daemon) == nil)
    }

    @Test func anHTTPBaseURLIsNotFollowed() throws {
        let plain = try TLSTestServer.start()
        defer { plain.stop() }
        let home = try movingServer(to: plain.base(tls: false))
        defer { home.stop() }
        let daemon = try daemon(defaultServer: home)
        defer { daemon.cleanUp() }
        #expect(home.events("REQUEST", atLeast: 2).count >= 2)
        #expect(Self.requests(plain) == 0)
        #expect(Self.keptFile(daemon) == nil)
    }
}
