import FlagsCore
import OFREP
import TestSupport
import Testing

/// The answers to parsed requests: routes, errors in OFREP's shapes, the token, 304 and 429.
@Suite(.hangLimit) struct OFREPResponderTests {
    let flags = OFREPFlags(
        FlagSet([Flag(key: "new_checkout", isEnabled: true, ruleId: "r_1", properties: ["color": "green"])]))

    private func post(
        _ path: String, _ body: String = "{}", headers: [(name: String, value: String)] = []
    ) -> HTTPRequest {
        HTTPRequest(method: "POST", path: path, headers: headers, body: Array(body.utf8))
    }

    private func answer(_ request: HTTPRequest, token: String? = nil, wait: Int? = nil) -> HTTPResponse {
        OFREPResponder(token: token.map { Array($0.utf8) }).respond(to: request, flags: { flags }, admit: { wait })
    }

    private func json(_ response: HTTPResponse) throws -> JSONValue {
        try JSONValue(parsing: response.body)
    }

    @Test func bulkAnswersEveryFlagWithAnETag() throws {
        let response = answer(post("/ofrep/v1/evaluate/flags", #"{"context":{"targetingKey":"u"}}"#))
        #expect(response.status == 200)
        #expect(response.header("ETag") == flags.bulkETag?.quoted)
        #expect(response.body == flags.bulkBody)
    }

    @Test func aBulkAnswerPastItsBoundIs500AndNamesTheSingleRoute() throws {
        let properties = Dictionary(uniqueKeysWithValues: (0..<100).map { ("p\($0)", JSONValue.number(1)) })
        let large = OFREPFlags(
            FlagSet([
                Flag(key: String(repeating: "k", count: 1000), isEnabled: true, ruleId: "r", properties: properties)
            ]),
            maximumBulkBytes: 4096)
        let response = OFREPResponder().respond(
            to: post("/ofrep/v1/evaluate/flags"), flags: { large }, admit: { nil })
        #expect(response.status == 500)
        #expect(try json(response)["errorDetails"]?.stringValue?.contains("/ofrep/v1/evaluate/flags/{key}") == true)
    }

    @Test func bulkAnswers304ToAMatchingIfNoneMatch() {
        let response = answer(
            post("/ofrep/v1/evaluate/flags", headers: [("if-none-match", flags.bulkETag?.quoted ?? "")]))
        #expect(response.status == 304)
        #expect(response.body.isEmpty)
        #expect(!response.serialized(closing: false).isEmpty)
    }

    @Test func singleAnswersOneEvaluation() throws {
        let response = answer(post("/ofrep/v1/evaluate/flags/new_checkout.color"))
        #expect(response.status == 200)
        #expect(try json(response)["value"] == "green")
    }

    @Test func singleDecodesAPercentEncodedKey() throws {
        let response = answer(post("/ofrep/v1/evaluate/flags/new%5Fcheckout"))
        #expect(try json(response)["key"] == "new_checkout")
    }

    @Test func anAbsentKeyIs404FlagNotFound() throws {
        let response = answer(post("/ofrep/v1/evaluate/flags/nope"))
        #expect(response.status == 404)
        #expect(
            try json(response) == [
                "key": "nope", "errorCode": "FLAG_NOT_FOUND", "errorDetails": "flag 'nope' was not found",
            ])
    }

    @Test(arguments: [
        ("{", "PARSE_ERROR"), ("[]", "PARSE_ERROR"), (#"{"context":1}"#, "INVALID_CONTEXT"),
        (#"{"context":{"targetingKey":7}}"#, "INVALID_CONTEXT"),
    ])
    func aBadBodyIs400WithOFREPsErrorCode(body: String, code: String) throws {
        let bulk = answer(post("/ofrep/v1/evaluate/flags", body))
        #expect(bulk.status == 400)
        #expect(try json(bulk)["errorCode"]?.stringValue == code)
        #expect(try json(bulk)["errorDetails"]?.stringValue != nil)
        let single = answer(post("/ofrep/v1/evaluate/flags/new_checkout", body))
        #expect(single.status == 400)
        #expect(try json(single)["key"] == "new_checkout")
    }

    @Test(arguments: ["", "{}", #"{"context":{}}"#, #"{"context":{"targetingKey":"someone-else","plan":"pro"}}"#])
    func contextIsOptionalAndDoesNotChangeTheAnswer(body: String) {
        let response = answer(post("/ofrep/v1/evaluate/flags", body))
        #expect(response.status == 200)
        #expect(response.body == flags.bulkBody)
    }

    @Test func aTokenIsRequiredWhenSetByEitherHeader() {
        let path = "/ofrep/v1/evaluate/flags"
        #expect(answer(post(path), token: "s3cret").status == 401)
        #expect(answer(post(path), token: "s3cret").header("WWW-Authenticate") == "Bearer")
        #expect(answer(post(path, headers: [("authorization", "Bearer wrong")]), token: "s3cret").status == 401)
        #expect(answer(post(path, headers: [("authorization", "Bearer s3cret")]), token: "s3cret").status == 200)
        #expect(answer(post(path, headers: [("authorization", "bearer s3cret")]), token: "s3cret").status == 200)
        #expect(answer(post(path, headers: [("x-api-key", "s3cret")]), token: "s3cret").status == 200)
        #expect(answer(post(path, headers: [("x-api-key", "s3cre")]), token: "s3cret").status == 401)
    }

    @Test func theTokenNeverAppearsInAnAnswer() {
        let response = answer(
            post("/ofrep/v1/evaluate/flags", headers: [("authorization", "Bearer wrong")]), token: "s3cret")
        #expect(!String(decoding: response.serialized(closing: true), as: UTF8.self).contains("s3cret"))
    }

    @Test func aClientOverItsRateGets429WithRetryAfter() throws {
        let response = answer(post("/ofrep/v1/evaluate/flags"), wait: 3)
        #expect(response.status == 429)
        #expect(response.header("Retry-After") == "3")
        #expect(try json(response)["errorDetails"]?.stringValue != nil)
    }

    @Test func otherPathsAre404AndOtherMethods405() {
        #expect(answer(post("/")).status == 404)
        #expect(answer(post("/ofrep/v2/evaluate/flags")).status == 404)
        let get = HTTPRequest(method: "GET", path: "/ofrep/v1/evaluate/flags")
        #expect(answer(get).status == 405)
        #expect(answer(get).header("Allow") == "POST")
    }

    @Test func serializedAnswersStateTheirLength() {
        let response = answer(post("/ofrep/v1/evaluate/flags"))
        let text = String(decoding: response.serialized(closing: true), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(text.contains("Content-Length: \(response.body.count)\r\n"))
        #expect(text.contains("Connection: close\r\n"))
    }
}
