import FeatureFlags
import FeatureFlagsCompat
import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport
import Testing

/// R6 through the SDK-shaped value, and the NSError of R11.
@Suite(.hangLimit) struct FeatureFlagTests {
    static let flag = FeatureFlag(
        Flag(
            key: "new_checkout", isEnabled: true, ruleId: "r_1a2b3c4d",
            properties: [
                "button_color": "green", "max_items": 5, "express": true, "one": 1,
                "layout": ["columns": 2, "dense": false, "note": nil], "steps": ["cart", "pay"],
            ]))

    @Test("An overridden flag read from the wire says so, and its source value reads like a flag")
    func overriddenFlagFromTheWire() throws {
        let line =
            #"{"key":"k","enabled":true,"ruleId":"override","properties":{"n":2},"source":"override","#
            + #""sourceValue":{"enabled":false,"ruleId":"r_1","properties":{"n":1},"source":"pushwoosh"}}"#
        let flag = FeatureFlag(try #require(Flag(wire: try JSONValue(parsing: line))))
        #expect(flag.isOverridden)
        #expect(flag.source == .override)
        let source = try #require(flag.sourceValue)
        #expect(source.key == "k" && !source.isEnabled && source.ruleId == "r_1" && source.source == .pushwoosh)
        #expect(source.number(forProperty: "n", default: 0) == 1)
        #expect(source.sourceValue == nil)
        #expect(Self.flag.source == nil && Self.flag.sourceValue == nil && !Self.flag.isOverridden)
        let added =
            #"{"key":"k","enabled":true,"ruleId":"override","properties":{},"source":"override","sourceValue":null}"#
        let addedFlag = try #require(Flag(wire: try JSONValue(parsing: added)))
        #expect(FeatureFlag(addedFlag).sourceValue == nil)
    }

    @Test("Typed reads return the value or the default for a missing or mistyped property")
    func typedReads() {
        let flag = Self.flag
        #expect(flag.key == "new_checkout" && flag.isEnabled && flag.ruleId == "r_1a2b3c4d")
        #expect(flag.string(forProperty: "button_color", default: "blue") == "green")
        #expect(flag.string(forProperty: "max_items", default: "blue") == "blue")
        #expect(flag.string(forProperty: "nope", default: nil) == nil)
        #expect(flag.number(forProperty: "max_items", default: 3) == 5)
        #expect(flag.number(forProperty: "express", default: 3) == 3)
        #expect(flag.bool(forProperty: "express", default: false))
        #expect(!flag.bool(forProperty: "one", default: false))
        #expect(flag.jsonObject(forProperty: "steps") == nil)
        #expect(flag.jsonArray(forProperty: "layout") == nil)
        #expect(flag.jsonArrayValue(forProperty: "steps") == ["cart", "pay"])
        #expect(flag.jsonObjectValue(forProperty: "layout")?["columns"] == 2)
    }

    @Test("jsonObject and jsonArray give SDK-style values: Bool stays Bool, numbers are Double, null is NSNull")
    func untypedJSON() throws {
        let layout = try #require(Self.flag.jsonObject(forProperty: "layout"))
        #expect(layout["columns"] as? Double == 2)
        #expect(layout["columns"] as? Bool == nil)
        #expect(layout["dense"] as? Bool == false)
        #expect(layout["note"] is NSNull)
        #expect(Self.flag.jsonArray(forProperty: "steps") as? [String] == ["cart", "pay"])
    }

    @Test(
        "R11: a failure becomes an NSError in PWFeatureFlagsErrorDomain whose code is the status",
        arguments: [
            (ClientError.rpc(.refreshFailed(status: 503, reason: "HTTP 503")), 503),
            (ClientError.rpc(.refreshFailed(status: 200, reason: "bad body")), 200),
            (ClientError.unreachable(socketPath: "/nope", reason: "ENOENT"), 0),
            (ClientError.disconnected(socketPath: "/nope"), 0),
            (ClientError.rpc(.notPermitted("refresh")), 0),
        ])
    func nsErrorCarriesTheStatus(error: ClientError, code: Int) {
        let nsError = error.featureFlagsError
        #expect(nsError.domain == "PWFeatureFlagsErrorDomain")
        #expect(nsError.domain == PWFeatureFlagsErrorDomain)
        #expect(nsError.code == code)
        #expect(nsError.userInfo[ClientError.userInfoKey] as? ClientError == error)
    }
}
