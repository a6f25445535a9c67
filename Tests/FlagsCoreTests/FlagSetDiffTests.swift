import FlagsCore
import TestSupport
import Testing

/// `FlagSet.diff(to:)` (R9) and `FlagDiff.restricted(to:)`.
@Suite(.hangLimit) struct FlagSetDiffTests {
    static let alpha = Flag(key: "alpha", isEnabled: true, ruleId: "r_1", properties: ["color": "green", "n": 1])
    static let beta = Flag(key: "beta", isEnabled: false, ruleId: "default")
    static let gamma = Flag(key: "gamma", isEnabled: true, ruleId: "")

    @Test func identicalSetsGiveAnEmptyDiff() {
        let old = FlagSet([Self.alpha, Self.beta, Self.gamma])
        let new = FlagSet([Self.gamma, Self.alpha, Self.beta])
        #expect(old.diff(to: new).isEmpty)
        #expect(old.diff(to: new) == FlagDiff())
        #expect(FlagSet().diff(to: FlagSet()).isEmpty)
    }

    @Test func addedFlagsAreChangedSortedByKey() {
        let diff = FlagSet().diff(to: FlagSet([Self.gamma, Self.alpha]))
        #expect(diff.changed == [Self.alpha, Self.gamma])
        #expect(diff.removed.isEmpty)
    }

    @Test func removedKeysAreListedSorted() {
        let diff = FlagSet([Self.gamma, Self.alpha, Self.beta]).diff(to: FlagSet([Self.beta]))
        #expect(diff.changed.isEmpty)
        #expect(diff.removed == ["alpha", "gamma"])
    }

    static func variants() -> [Flag] {
        var enabled = alpha
        enabled.isEnabled = false
        var rule = alpha
        rule.ruleId = "r_2"
        var property = alpha
        property.properties["color"] = "red"
        var propertyType = alpha
        propertyType.properties["n"] = true
        var addedProperty = alpha
        addedProperty.properties["extra"] = .null
        var removedProperty = alpha
        removedProperty.properties["n"] = nil
        return [enabled, rule, property, propertyType, addedProperty, removedProperty]
    }

    @Test(arguments: variants())
    func aChangeOfEnabledRuleOrAPropertyIsAChange(newer: Flag) {
        let diff = FlagSet([Self.alpha, Self.beta]).diff(to: FlagSet([newer, Self.beta]))
        #expect(diff.changed == [newer])
        #expect(diff.removed.isEmpty)
        #expect(!diff.isEmpty)
    }

    @Test func addedChangedAndRemovedTogether() {
        var changedBeta = Self.beta
        changedBeta.isEnabled = true
        let diff = FlagSet([Self.alpha, Self.beta]).diff(to: FlagSet([changedBeta, Self.gamma]))
        #expect(diff.changed == [changedBeta, Self.gamma])
        #expect(diff.removed == ["alpha"])
    }

    @Test func restrictedKeepsOnlyTheGivenKeys() {
        let diff = FlagDiff(changed: [Self.alpha, Self.beta], removed: ["gamma", "delta"])
        #expect(diff.restricted(to: ["alpha", "delta"]) == FlagDiff(changed: [Self.alpha], removed: ["delta"]))
        #expect(diff.restricted(to: ["nothing"]).isEmpty)
        #expect(diff.restricted(to: []).isEmpty)
    }

    @Test func restrictedToNilKeepsEverything() {
        let diff = FlagDiff(changed: [Self.alpha], removed: ["gamma"])
        #expect(diff.restricted(to: nil) == diff)
    }

    @Test func restrictedIsCaseSensitive() {
        let diff = FlagDiff(changed: [Self.alpha], removed: ["gamma"])
        #expect(diff.restricted(to: ["Alpha", "GAMMA"]).isEmpty)
    }

    /// "café" precomposed (U+00E9) and decomposed (e + U+0301): equal Swift strings, different keys (R2).
    static let precomposed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test func canonicallyEquivalentKeysAreTwoFlags() {
        let set = FlagSet([
            Flag(key: Self.precomposed, isEnabled: true, ruleId: "r_1"),
            Flag(key: Self.decomposed, isEnabled: false, ruleId: "r_2"),
        ])
        #expect(set.count == 2)
        #expect(set[Self.precomposed]?.ruleId == "r_1")
        #expect(set[Self.decomposed]?.ruleId == "r_2")
        #expect(FlagSet([Flag(key: Self.precomposed, isEnabled: true, ruleId: "r_1")])[Self.decomposed] == nil)
        let diff = FlagDiff(
            changed: [Flag(key: Self.precomposed, isEnabled: true, ruleId: "r_1")], removed: [Self.decomposed])
        #expect(diff.restricted(to: [FlagKey(Self.decomposed)]) == FlagDiff(removed: [Self.decomposed]))
    }

    @Test func aValueThatChangedOnlyItsUnicodeFormIsAChange() {
        let old = Flag(key: "k", isEnabled: true, ruleId: "r", properties: ["text": .string(Self.precomposed)])
        let new = Flag(key: "k", isEnabled: true, ruleId: "r", properties: ["text": .string(Self.decomposed)])
        #expect(FlagSet([old]).diff(to: FlagSet([new])).changed == [new])
        let renamed = Flag(key: Self.decomposed, isEnabled: true, ruleId: "r")
        let diff = FlagSet([Flag(key: Self.precomposed, isEnabled: true, ruleId: "r")]).diff(to: FlagSet([renamed]))
        #expect(diff.changed.map(\.key) == [Self.decomposed] && diff.removed == [Self.precomposed])
    }

    @Test("Keys sort by their UTF-8 bytes: a prefix first, then byte by byte, canonical equivalence ignored")
    func keysSortByBytes() {
        let keys: [FlagKey] = ["b", "ab", "caf\u{E9}", "", "A", "a", "cafe\u{301}", "z", "a\u{0}"]
        let expected: [FlagKey] = ["", "A", "a", "a\u{0}", "ab", "b", "cafe\u{301}", "caf\u{E9}", "z"]
        #expect(keys.sorted().map(\.string.utf8).map(Array.init) == expected.map(\.string.utf8).map(Array.init))
        #expect(!(FlagKey("a") < FlagKey("a")))
    }
}
