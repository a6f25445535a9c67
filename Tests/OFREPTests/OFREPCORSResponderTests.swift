import FlagsCore
import OFREP
import TestSupport
import Testing

/// CORS for the origins in `AllowedOrigins`: preflights without the token, the fields on every answer, nothing
/// for any other origin.
@Suite(.hangLimit) struct OFREPCORSResponderTests {
    let flags = OFREPFlags(FlagSet([Flag(key: "new_checkout", isEnabled: true, ruleId: "r_1")]))
    let responder = OFREPResponder(token: Array("secret".utf8), allowedOrigins: ["http://127.0.0.1:8080"])

    private func answer(_ request: HTTPRequest) -> HTTPResponse {
        responder.respond(to: request, flags: { flags }, admit: { nil })
    }

    private func preflight(origin: String) -> HTTPRequest {
        HTTPRequest(
            method: "OPTIONS", path: "/ofrep/v1/evaluate/flags",
            headers: [("origin", origin), ("access-control-request-method", "POST")])
    }

    @Test func aPreflightFromAnAllowedOriginIs204WithoutTheTokenAndWithoutABody() {
        let response = answer(preflight(origin: "http://127.0.0.1:8080"))
        #expect(response.status == 204)
        #expect(response.header("Access-Control-Allow-Origin") == "http://127.0.0.1:8080")
        #expect(response.header("Access-Control-Max-Age") == "600")
        let wire = String(decoding: response.serialized(closing: false), as: UTF8.self)
        #expect(wire.hasPrefix("HTTP/1.1 204 No Content\r\n"))
        #expect(!wire.lowercased().contains("content-length"))
        #expect(wire.hasSuffix("\r\n\r\n"))
    }

    @Test func aPreflightFromAnotherOriginIsAnOrdinaryRequestWithoutTheToken() {
        let response = answer(preflight(origin: "http://127.0.0.1:8081"))
        #expect(response.status == 401)
        #expect(response.header("Access-Control-Allow-Origin") == nil)
        #expect(response.header("Vary") == "Origin")
        #expect(!responder.isPreflight(preflight(origin: "http://127.0.0.1:8081")))
    }

    @Test func aRealRequestFromAnAllowedOriginStillNeedsTheToken() {
        let request = HTTPRequest(
            method: "POST", path: "/ofrep/v1/evaluate/flags", headers: [("origin", "http://127.0.0.1:8080")])
        let refused = answer(request)
        #expect(refused.status == 401)
        #expect(refused.header("Access-Control-Allow-Origin") == "http://127.0.0.1:8080")
        var authorized = request
        authorized.headers.append(("authorization", "Bearer secret"))
        let served = answer(authorized)
        #expect(served.status == 200)
        #expect(served.header("Access-Control-Expose-Headers")?.contains("ETag") == true)
    }

    @Test func withoutOriginsNothingChanges() {
        let plain = OFREPResponder(token: nil)
        let request = HTTPRequest(
            method: "POST", path: "/ofrep/v1/evaluate/flags", headers: [("origin", "http://127.0.0.1:8080")])
        let response = plain.respond(to: request, flags: { flags }, admit: { nil })
        #expect(response.headers.map(\.name) == ["Content-Type", "ETag"])
    }
}
