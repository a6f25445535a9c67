import FlagsCore
import PushwooshAPI
import TestSupport
import Testing

@Suite("Decoding getFeatureFlags replies", .hangLimit)
struct FeatureFlagsDecodingTests {
    private func decode(_ text: String) throws(PushwooshError) -> FeatureFlagsResponse {
        try FeatureFlagsResponse.decode(body: Array(text.utf8))
    }

    private func unusableStatus(_ text: String) -> Int? {
        do {
            _ = try decode(text)
            return nil
        } catch {
            return error.status
        }
    }

    @Test func decodesEveryPropertyType() throws {
        let reply = try decode(
            #"""
            {"status_code":200,"status_message":"OK","response":{"flags":[{"key":"new_checkout","enabled":true,
            "rule_id":"r_1a2b3c4d","properties":{"button_color":"green","max_items":5,"express":true,
            "layout":{"columns":2},"steps":["cart","pay"]}}],"partial":false}}
            """#)
        #expect(reply.partial == false)
        #expect(reply.baseURL == nil)
        let flag = try #require(reply.flags.first)
        #expect(flag.key == "new_checkout")
        #expect(flag.isEnabled)
        #expect(flag.ruleId == "r_1a2b3c4d")
        #expect(flag.properties["button_color"] == .string("green"))
        #expect(flag.properties["max_items"] == .number(5))
        #expect(flag.properties["express"] == .bool(true))
        #expect(flag.properties["layout"] == ["columns": 2])
        #expect(flag.properties["steps"] == ["cart", "pay"])
    }

    @Test func killedFlagKeepsEmptyRuleIdAndDefaults() throws {
        let reply = try decode(
            #"{"status_code":200,"response":{"flags":[{"key":"k","enabled":false,"rule_id":"","properties":{"n":1}}]}}"#
        )
        let flag = try #require(reply.flags.first)
        #expect(flag.isKilled)
        #expect(!flag.isEnabled)
        #expect(flag.properties == ["n": 1])
    }

    @Test func missingRuleIdReadsAsDefaultAndMissingPropertiesAsNone() throws {
        let reply = try decode(#"{"status_code":200,"response":{"flags":[{"key":"k","enabled":true}]}}"#)
        #expect(reply.flags == [Flag(key: "k", isEnabled: true, ruleId: "default", properties: [:])])
    }

    @Test func partialIsReadAndMissingMeansFalse() throws {
        #expect(try decode(#"{"status_code":200,"response":{"flags":[],"partial":true}}"#).partial)
        #expect(try !decode(#"{"status_code":200,"response":{"flags":[]}}"#).partial)
    }

    @Test func responseWithoutFlagsMeansNoFlags() throws {
        #expect(try decode(#"{"status_code":200,"response":{}}"#).flags.isEmpty)
    }

    @Test func baseURLIsTakenFromASuccessfulReply() throws {
        let reply = try decode(
            #"{"status_code":200,"base_url":"https://x.example.com/json/1.3/","response":{"flags":[]}}"#)
        #expect(reply.baseURL?.absoluteString == "https://x.example.com/json/1.3/")
    }

    @Test func baseURLNotEndingInJson13IsIgnored() throws {
        let reply = try decode(#"{"status_code":200,"base_url":"https://x.example.com/","response":{"flags":[]}}"#)
        #expect(reply.baseURL == nil)
    }

    @Test(arguments: ["http://x.example.com/json/1.3/", "HTTP://x.example.com/json/1.3/"])
    func plainHTTPBaseURLIsIgnored(url: String) throws {
        let reply = try decode(#"{"status_code":200,"base_url":""# + url + #"","response":{"flags":[]}}"#)
        #expect(reply.baseURL == nil)
    }

    @Test func baseURLOfAFailedEnvelopeIsNeverTaken() {
        let text = #"{"status_code":210,"base_url":"https://x.example.com/json/1.3/","response":{"flags":[]}}"#
        #expect(unusableStatus(text) == 200)
    }

    @Test(arguments: [
        "not json",
        "",
        "[1,2]",
        #"{"response":{"flags":[]}}"#,
        #"{"status_code":"200","response":{"flags":[]}}"#,
        #"{"status_code":400,"status_message":"bad","response":{"flags":[]}}"#,
        #"{"status_code":200}"#,
        #"{"status_code":200,"response":null}"#,
        #"{"status_code":200,"response":{"flags":{}}}"#,
        #"{"status_code":200,"response":{"flags":null}}"#,
        #"{"status_code":200,"response":{"flags":[1]}}"#,
        #"{"status_code":200,"response":{"flags":[{"enabled":true}]}}"#,
        #"{"status_code":200,"response":{"flags":[{"key":5,"enabled":true}]}}"#,
        #"{"status_code":200,"response":{"flags":[{"key":"k"}]}}"#,
        #"{"status_code":200,"response":{"flags":[{"key":"k","enabled":1}]}}"#,
        #"{"status_code":200,"response":{"flags":[{"key":"k","enabled":true,"rule_id":3}]}}"#,
        #"{"status_code":200,"response":{"flags":[{"key":"k","enabled":true,"rule_id":null}]}}"#,
        #"{"status_code":200,"response":{"flags":[{"key":"k","enabled":true,"properties":[]}]}}"#,
        #"{"status_code":200,"response":{"flags":[{"key":"k","enabled":true},{"key":"k","enabled":false}]}}"#,
        #"{"status_code":200,"response":{"flags":[],"partial":"yes"}}"#,
    ])
    func unusableRepliesHaveStatus200(text: String) {
        #expect(unusableStatus(text) == 200)
    }

    @Test func keysDifferingOnlyInCaseAreNotDuplicates() throws {
        let reply = try decode(
            #"{"status_code":200,"response":{"flags":[{"key":"k","enabled":true},{"key":"K","enabled":false}]}}"#)
        #expect(reply.flags.map(\.key) == ["k", "K"])
    }

    @Test func bodyOverEightMiBIsUnusable() {
        let envelope = Array(#"{"status_code":200,"response":{"flags":[]}}"#.utf8)
        let body = envelope + [UInt8](repeating: UInt8(ascii: " "), count: 8 * 1024 * 1024)
        #expect(throws: PushwooshError.unusable("reply over 8 MiB")) { try FeatureFlagsResponse.decode(body: body) }
    }

    @Test func localFileShapeDecodesWithoutAnEnvelope() throws {
        let object = try JSONValue(parsing: #"{"flags":[{"key":"a","enabled":true,"rule_id":"r"}],"partial":false}"#)
        let response = try FeatureFlagsResponse.decode(responseObject: object)
        #expect(response == FeatureFlagsResponse(flags: [Flag(key: "a", isEnabled: true, ruleId: "r")]))
    }

    @Test func localFileThatIsNotAnObjectIsRefused() {
        #expect(throws: PushwooshError.self) { try FeatureFlagsResponse.decode(responseObject: [1, 2]) }
    }
}
