import FlagsCore
import TestSupport
import Testing

/// Typed property reads (R6) and case-sensitive keys (R2).
@Suite(.hangLimit) struct FlagPropertiesTests {
    static let flag = Flag(
        key: "new_checkout",
        isEnabled: true,
        ruleId: "r_1a2b3c4d",
        properties: [
            "button_color": "green",
            "max_items": 5,
            "ratio": 0.25,
            "express": true,
            "one": 1,
            "zero": 0,
            "true_text": "true",
            "five_text": "5",
            "nothing": nil,
            "layout": ["columns": 2],
            "steps": ["cart", "pay"],
        ]
    )

    @Test func stringReadReturnsTheStringProperty() {
        #expect(Self.flag.string(forProperty: "button_color", default: "blue") == "green")
        #expect(Self.flag.string(forProperty: "true_text", default: nil) == "true")
    }

    @Test func numberReadReturnsTheNumberAsADouble() {
        #expect(Self.flag.number(forProperty: "max_items", default: -1) == 5.0)
        #expect(Self.flag.number(forProperty: "ratio", default: -1) == 0.25)
    }

    @Test func boolReadReturnsTheBooleanProperty() {
        #expect(Self.flag.bool(forProperty: "express", default: false) == true)
    }

    @Test func jsonReadsReturnObjectsAndArrays() {
        #expect(Self.flag.jsonObject(forProperty: "layout") == ["columns": 2])
        #expect(Self.flag.jsonArray(forProperty: "steps") == ["cart", "pay"])
    }

    @Test(arguments: ["max_items", "express", "layout", "steps", "nothing", "missing"])
    func stringReadOfAnotherTypeGivesTheDefault(name: String) {
        #expect(Self.flag.string(forProperty: name, default: "fallback") == "fallback")
        #expect(Self.flag.string(forProperty: name, default: nil) == nil)
    }

    @Test(arguments: ["express", "button_color", "five_text", "layout", "steps", "nothing", "missing"])
    func numberReadOfAnotherTypeGivesTheDefault(name: String) {
        #expect(Self.flag.number(forProperty: name, default: 42.5) == 42.5)
    }

    @Test(arguments: ["one", "zero", "max_items", "true_text", "layout", "steps", "nothing", "missing"])
    func boolReadOfAnotherTypeGivesTheDefault(name: String) {
        #expect(Self.flag.bool(forProperty: name, default: false) == false)
        #expect(Self.flag.bool(forProperty: name, default: true) == true)
    }

    @Test func theNumberOneIsNotTrueAndTrueIsNotANumber() {
        #expect(Self.flag.bool(forProperty: "one", default: false) == false)
        #expect(Self.flag.number(forProperty: "express", default: 7) == 7)
    }

    @Test(arguments: ["button_color", "max_items", "express", "steps", "nothing", "missing"])
    func jsonObjectReadOfAnotherTypeIsNil(name: String) {
        #expect(Self.flag.jsonObject(forProperty: name) == nil)
    }

    @Test(arguments: ["button_color", "max_items", "express", "layout", "nothing", "missing"])
    func jsonArrayReadOfAnotherTypeIsNil(name: String) {
        #expect(Self.flag.jsonArray(forProperty: name) == nil)
    }

    @Test func propertyNamesAreCaseSensitive() {
        #expect(Self.flag.string(forProperty: "Button_Color", default: "none") == "none")
        #expect(Self.flag.number(forProperty: "MAX_ITEMS", default: 0) == 0)
    }

    @Test func aFlagWithoutPropertiesGivesEveryDefault() {
        let bare = Flag(key: "bare", isEnabled: false, ruleId: "default")
        #expect(bare.string(forProperty: "x", default: "d") == "d")
        #expect(bare.number(forProperty: "x", default: 3) == 3)
        #expect(bare.bool(forProperty: "x", default: true) == true)
        #expect(bare.jsonObject(forProperty: "x") == nil)
        #expect(bare.jsonArray(forProperty: "x") == nil)
    }

    @Test func flagKeysAreCaseSensitiveInAFlagSet() {
        let lower = Flag(key: "new_checkout", isEnabled: true, ruleId: "r_1")
        let mixed = Flag(key: "New_Checkout", isEnabled: false, ruleId: "r_2")
        let set = FlagSet([lower, mixed])
        #expect(set.count == 2)
        #expect(set["new_checkout"] == lower)
        #expect(set["New_Checkout"] == mixed)
        #expect(set["NEW_CHECKOUT"] == nil)
        #expect(set[" new_checkout"] == nil)
        #expect(set["new_checkout "] == nil)
    }
}
