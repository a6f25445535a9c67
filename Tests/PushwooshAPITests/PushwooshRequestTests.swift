import FlagsCore
import Foundation
import PushwooshAPI
import TestSupport
import Testing

@Suite("Requests as they go on the wire", .hangLimit)
struct PushwooshRequestTests {
    let base = URL(string: "https://ABCDE-12345.api.pushwoosh.com/json/1.3/")
    let common = CommonFields(applicationCode: "ABCDE-12345", hwid: "hw-1", userId: "user-1", version: "1.2.3")

    @Test func getFeatureFlagsPostsTheCommonFieldsToBasePlusMethod() throws {
        let base = try #require(base)
        let request = PushwooshRequest.getFeatureFlags(base: base, common: common, apiToken: nil)
        #expect(request.url.absoluteString == "https://ABCDE-12345.api.pushwoosh.com/json/1.3/getFeatureFlags")
        #expect(
            String(decoding: request.body, as: UTF8.self)
                == #"{"request":{"application":"ABCDE-12345","hwid":"hw-1","userId":"user-1","v":"1.2.3"}}"#)
    }

    @Test func headersCarryContentTypeAndUserAgentAndNoAuthorizationWithoutToken() throws {
        let request = PushwooshRequest.getFeatureFlags(base: try #require(base), common: common, apiToken: nil)
        #expect(
            request.headers == [
                "Content-Type": "application/json; charset=utf-8",
                "User-Agent": "pwflagsd/1.2.3",
            ])
    }

    @Test func authorizationHeaderIsSentOnlyWithAToken() throws {
        let request = PushwooshRequest.getFeatureFlags(base: try #require(base), common: common, apiToken: "s3cret")
        #expect(request.headers["Authorization"] == "Token s3cret")
        #expect(request.headers.count == 3)
        #expect(!request.description.contains("s3cret"))
    }

    @Test func deviceTypeIsAnIntegerOnlyWhenSet() throws {
        var withType = common
        withType.deviceType = 7
        let request = PushwooshRequest.getFeatureFlags(base: try #require(base), common: withType, apiToken: nil)
        let body = try JSONValue(parsing: request.body)
        #expect(body["request"]?["device_type"] == .number(7))
        #expect(String(decoding: request.body, as: UTF8.self).contains(#""device_type":7,"#))
        let without = PushwooshRequest.getFeatureFlags(base: try #require(base), common: common, apiToken: nil)
        #expect(try JSONValue(parsing: without.body)["request"]?["device_type"] == nil)
    }

    @Test func impressionEventCarriesAttributesAndBothTimestamps() throws {
        let flag = Flag(key: "new_checkout", isEnabled: true, ruleId: "r_1a2b3c4d")
        let date = Date(timeIntervalSince1970: 1_764_417_600.75)
        let event = PushwooshEvent.impression(of: flag, date: date, utcOffsetSeconds: 3600)
        let request = PushwooshRequest.postEvent(base: try #require(base), common: common, apiToken: nil, event: event)
        #expect(request.url.lastPathComponent == "postEvent")
        let expected: JSONValue = [
            "request": [
                "application": "ABCDE-12345", "hwid": "hw-1", "userId": "user-1", "v": "1.2.3",
                "event": "PW_FeatureFlagImpression",
                "attributes": ["flag_key": "new_checkout", "rule_id": "r_1a2b3c4d", "enabled": true],
                "timestampUTC": 1_764_417_600,
                "timestampCurrent": 1_764_421_200,
            ]
        ]
        #expect(try JSONValue(parsing: request.body) == expected)
    }

    @Test func negativeOffsetMovesLocalTimeBack() {
        let event = PushwooshEvent(
            name: "x", attributes: [:], date: Date(timeIntervalSince1970: 1000), utcOffsetSeconds: -18000)
        #expect(event.timestampUTC == 1000)
        #expect(event.timestampCurrent == 1000 - 18000)
    }
}

@Suite("Base addresses (R16)", .hangLimit)
struct PushwooshEndpointTests {
    @Test func defaultBaseIsTheApplicationHost() {
        #expect(
            PushwooshEndpoint.defaultBase(applicationCode: "ABCDE-12345")?.absoluteString
                == "https://ABCDE-12345.api.pushwoosh.com/json/1.3/")
    }

    @Test(arguments: ["", "evil.com/x", "a b", "code?"])
    func defaultBaseRefusesCodesThatAreNotAHostLabel(code: String) {
        #expect(PushwooshEndpoint.defaultBase(applicationCode: code) == nil)
    }

    /// The configuration checks codes and renders the default address from the same rule the client calls.
    @Test(arguments: ["ABCDE-12345", "", "evil.com/x", "a b", "code?", "caf\u{E9}", "\u{FF21}BC"])
    func configurationAndEndpointAgreeOnCodesAndTheDefaultAddress(code: String) throws {
        var configuration = Configuration()
        let problems = ConfigurationParser.parse(
            text: "[Pushwoosh]\nApplicationCode=\(code)\n", file: "/etc/pwflagsd.conf", into: &configuration)
        let accepted = !code.isEmpty && problems.isEmpty
        #expect(accepted == (PushwooshEndpoint.defaultBase(applicationCode: code) != nil))
        configuration.applicationCode = code
        #expect(configuration.defaultServerURL == PushwooshEndpoint.defaultBase(applicationCode: code)?.absoluteString)
    }

    @Test(arguments: [
        "https://proxy.example.com/json/1.3/", "http://127.0.0.1:8080/pw/json/1.3/",
    ])
    func acceptsURLsEndingWithJson13(url: String) {
        #expect(PushwooshEndpoint.isAcceptableBase(url))
    }

    @Test(arguments: ["https://eu.api.pushwoosh.com/json/1.3/", "HTTPS://eu.api.pushwoosh.com:8443/json/1.3/"])
    func aMoveMayGoToHTTPS(url: String) {
        #expect(PushwooshEndpoint.isAcceptableMove(url))
    }

    /// Only the operator's ServerURL may be plain http: a reply must not move the daemon off TLS.
    @Test(arguments: [
        "http://eu.api.pushwoosh.com/json/1.3/", "http://127.0.0.1:8080/pw/json/1.3/", "https://x.example.com/",
        "ftp://x.example.com/json/1.3/",
    ])
    func aMoveNeverGoesToPlainHTTPOrAnUnacceptableBase(url: String) {
        #expect(!PushwooshEndpoint.isAcceptableMove(url))
    }

    @Test(arguments: [
        "https://proxy.example.com/json/1.3", "https://proxy.example.com/json/1.2/", "https://proxy.example.com/",
        "ftp://proxy.example.com/json/1.3/", "json/1.3/", "https:///json/1.3/",
    ])
    func refusesOtherURLs(url: String) {
        #expect(!PushwooshEndpoint.isAcceptableBase(url))
    }

    @Test func rejectedServerURLIsNeverSentWithStatusZero() {
        let result = PushwooshEndpoint.base(serverURL: "https://proxy.example.com/api/", applicationCode: "ABCDE")
        #expect(throws: PushwooshError.self) { try result.get() }
        if case .failure(let error) = result { #expect(error.status == 0) }
    }

    @Test func serverURLWinsOverTheApplicationCode() throws {
        let url = try PushwooshEndpoint.base(serverURL: "https://p.example.com/json/1.3/", applicationCode: "ABCDE")
            .get()
        #expect(url.absoluteString == "https://p.example.com/json/1.3/")
    }

    @Test func missingApplicationCodeIsNeverSent() {
        guard case .failure(let error) = PushwooshEndpoint.base(serverURL: nil, applicationCode: "") else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.status == 0)
    }
}
