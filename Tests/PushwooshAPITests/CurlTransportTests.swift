import FlagsCore
import Foundation
import PushwooshAPI
import TestSupport
import Testing

/// The guarantees of the HTTPS transport, each against a local server: TLS with a throw-away CA made here,
/// never the internet.
@Suite("The libcurl transport against local TLS servers", .hangLimit)
struct CurlTransportTests {
    static let token = "TOPSECRET-token-42"
    let common = CommonFields(applicationCode: "ABCDE-12345", hwid: "hw-1", userId: "user-1", version: "0.9.0")

    private func failure<T>(_ result: Result<T, PushwooshError>) -> PushwooshError? {
        guard case .failure(let error) = result else { return nil }
        return error
    }

    @Test func anUntrustedCertificateIsRefusedByDefault() async throws {
        let authority = try TestCertificateAuthority()
        let server = try TLSTestServer.start(certificate: try authority.issue())
        defer { server.stop() }
        let client = PushwooshClient(apiToken: Self.token, requestTimeout: .seconds(5))
        let error = try #require(failure(await client.getFeatureFlags(base: server.base(), common: common)))
        #expect(error.status == 0)
        #expect(error.kind == .tls)
        #expect(error.reason.contains("certificate"))
        #expect(!error.description.contains(Self.token))
        #expect(server.events.filter { $0.hasPrefix("REQUEST") }.isEmpty)
    }

    @Test func aCertificateSignedByTheConfiguredCAIsTrusted() async throws {
        let authority = try TestCertificateAuthority()
        let server = try TLSTestServer.start(certificate: try authority.issue())
        defer { server.stop() }
        let client = PushwooshClient(
            apiToken: Self.token, requestTimeout: .seconds(5), caFile: authority.certificatePath)
        let reply = try await client.getFeatureFlags(base: server.base(), common: common).get()
        #expect(reply.flags.isEmpty)
        #expect(
            server.events("REQUEST", atLeast: 1) == [
                "REQUEST POST /json/1.3/getFeatureFlags localhost:\(server.port) cookie=no"
            ])
    }

    @Test func aCertificateForAnotherHostIsRefused() async throws {
        let authority = try TestCertificateAuthority()
        let server = try TLSTestServer.start(certificate: try authority.issue(for: ["elsewhere.example.com"]))
        defer { server.stop() }
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(5), caFile: authority.certificatePath)
        let error = failure(await client.getFeatureFlags(base: server.base(), common: common))
        #expect(error?.kind == .tls)
        #expect(error?.status == 0)
    }

    @Test func theConnectionIsReusedBetweenRequests() async throws {
        let authority = try TestCertificateAuthority()
        let server = try TLSTestServer.start(certificate: try authority.issue())
        defer { server.stop() }
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(5), caFile: authority.certificatePath)
        for _ in 0..<3 { _ = try await client.getFeatureFlags(base: server.base(), common: common).get() }
        #expect(server.events("REQUEST", atLeast: 3).count == 3)
        #expect(server.events.filter { $0 == "CONNECTION" }.count == 1)
    }

    @Test func cookiesAreNeitherKeptNorSent() async throws {
        var settings = TLSTestServer.Settings()
        settings.headers = [("Set-Cookie", "session=abc; Path=/")]
        let server = try TLSTestServer.start(settings)
        defer { server.stop() }
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(5))
        for _ in 0..<2 { _ = try await client.getFeatureFlags(base: server.base(tls: false), common: common).get() }
        let requests = server.events("REQUEST", atLeast: 2)
        #expect(requests.count == 2)
        #expect(requests.allSatisfy { $0.hasSuffix("cookie=no") })
    }

    @Test func theWholeExchangeIsBoundedByTheRequestTimeout() async throws {
        let authority = try TestCertificateAuthority()
        var settings = TLSTestServer.Settings()
        settings.hang = true
        let server = try TLSTestServer.start(settings, certificate: try authority.issue())
        defer { server.stop() }
        let client = PushwooshClient(
            apiToken: nil, requestTimeout: .milliseconds(400), caFile: authority.certificatePath)
        let clock = ContinuousClock()
        let start = clock.now
        let error = failure(await client.getFeatureFlags(base: server.base(), common: common))
        let elapsed = clock.now - start
        #expect(error?.kind == .timeout)
        #expect(error?.status == 0)
        #expect(elapsed >= .milliseconds(350))
        #expect(elapsed < .seconds(3))
    }

    @Test func aReplyOverTheLimitIsRefusedAsTooLarge() async throws {
        let authority = try TestCertificateAuthority()
        var settings = TLSTestServer.Settings()
        settings.hugeBody = 2 * 1024 * 1024
        let server = try TLSTestServer.start(settings, certificate: try authority.issue())
        defer { server.stop() }
        let client = PushwooshClient(
            apiToken: nil, requestTimeout: .seconds(10), maximumReplyBytes: 1024 * 1024,
            caFile: authority.certificatePath)
        let error = failure(await client.getFeatureFlags(base: server.base(), common: common))
        #expect(error?.kind == .tooLarge)
        #expect(error?.status == 200)
    }

    @Test func cancellingTheCallingTaskEndsTheExchangeAtOnce() async throws {
        var settings = TLSTestServer.Settings()
        settings.hang = true
        let server = try TLSTestServer.start(settings)
        defer { server.stop() }
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(30))
        let base = server.base(tls: false)
        let common = common
        let task = Task { await client.getFeatureFlags(base: base, common: common) }
        _ = server.events("REQUEST", atLeast: 1)
        let clock = ContinuousClock()
        let start = clock.now
        task.cancel()
        let error = failure(await task.value)
        #expect(error?.kind == .cancelled)
        #expect(clock.now - start < .milliseconds(500))
    }

    @Test func aFailedReplyCarriesItsStatusRetryAfterAndTheStartOfItsBody() async throws {
        var settings = TLSTestServer.Settings()
        settings.status = 429
        settings.headers = [("Retry-After", "120")]
        settings.body = String(repeating: "b", count: 100 * 1024)
        let server = try TLSTestServer.start(settings)
        defer { server.stop() }
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(5))
        let error = try #require(failure(await client.getFeatureFlags(base: server.base(tls: false), common: common)))
        #expect(error.status == 429)
        #expect(error.kind == .http)
        #expect(error.retryAfter == "120")
        #expect(error.body == Array(repeating: UInt8(ascii: "b"), count: PushwooshError.failureBodyLimit))
    }

    @Test func aFailedReplyWithoutRetryAfterHasNone() async throws {
        var settings = TLSTestServer.Settings()
        settings.status = 503
        settings.body = #"{"status_code":503,"status_message":"down"}"#
        let server = try TLSTestServer.start(settings)
        defer { server.stop() }
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(5))
        let error = try #require(failure(await client.getFeatureFlags(base: server.base(tls: false), common: common)))
        #expect(error.status == 503)
        #expect(error.retryAfter == nil)
        #expect(String(decoding: error.body, as: UTF8.self) == settings.body)
    }

    @Test func anUnresolvableHostIsADNSFailure() async throws {
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(5))
        let base = try #require(URL(string: "https://pwflagsd-test.invalid/json/1.3/"))
        let error = failure(await client.getFeatureFlags(base: base, common: common))
        #expect(error?.kind == .dns)
        #expect(error?.status == 0)
    }

    @Test func aRefusedConnectionIsAConnectFailure() async throws {
        let server = try TLSTestServer.start()
        let base = server.base(tls: false)
        server.stop()
        let client = PushwooshClient(apiToken: nil, requestTimeout: .seconds(5))
        let error = failure(await client.getFeatureFlags(base: base, common: common))
        #expect(error?.kind == .connect)
        #expect(error?.status == 0)
    }
}
