import FlagsCore
import TestSupport
import Testing

/// `FlagOverride.applied(to:)` and `FlagSet.applying(_:)`: how an override layers over the source's flag.
@Suite(.hangLimit) struct FlagOverrideTests {
    static let source = Flag(
        key: "alpha", isEnabled: true, ruleId: "r_1", properties: ["color": "green", "n": 1], source: .pushwoosh)

    @Test("enabled nil keeps the source's state; properties replace only those of the same name")
    func keepsWhatItDoesNotForce() {
        let flag = FlagOverride(key: "alpha", properties: ["color": "red"]).applied(to: Self.source)
        #expect(flag.isEnabled)
        #expect(flag.properties == ["color": "red", "n": 1])
        #expect(flag.ruleId == Flag.overrideRuleId)
        #expect(flag.source == .override)
        #expect(flag.isOverridden)
        #expect(flag.sourceValue == FlagValue(Self.source))
        #expect(flag.sourceValue?.source == .pushwoosh)
    }

    @Test("An override of a key the source lacks adds a flag, disabled unless forced, with no source value")
    func addsAnAbsentKey() {
        let flag = FlagOverride(key: "new", properties: ["a": true]).applied(to: nil)
        #expect(
            flag == Flag(key: "new", isEnabled: false, ruleId: "override", properties: ["a": true], source: .override))
        #expect(FlagOverride(key: "new", isEnabled: true).applied(to: nil).isEnabled)
    }

    @Test("A set with overrides layers each key, by exact bytes, and adds the keys it lacks")
    func layersASet() {
        let set = FlagSet([Self.source, Flag(key: "beta", isEnabled: false, ruleId: "default")]).marked(.file)
        let layered = set.applying([
            "alpha": FlagOverride(key: "alpha", isEnabled: false), "Alpha": FlagOverride(key: "Alpha"),
        ])
        #expect(layered.count == 3)
        #expect(layered["alpha"]?.isEnabled == false)
        #expect(layered["alpha"]?.sourceValue?.source == .file)
        #expect(layered["Alpha"]?.sourceValue == nil)
        #expect(layered["beta"]?.source == .file)
        #expect(set.applying([:]) == set)
    }

    @Test("A change of an overridden flag's source value is a change (get returns it), an identical one is not")
    func sourceValueCountsForTheDiff() {
        let override = FlagOverride(key: "alpha", isEnabled: true)
        let before = FlagSet([Self.source]).applying(["alpha": override])
        var moved = Self.source
        moved.ruleId = "r_2"
        let after = FlagSet([moved]).applying(["alpha": override])
        #expect(before.diff(to: after).changed.map(\.key) == ["alpha"])
        #expect(before.diff(to: FlagSet([Self.source]).applying(["alpha": override])).isEmpty)
        // The source's own flag, marked or not, differs from the overridden one.
        #expect(!before.diff(to: FlagSet([Self.source])).isEmpty)
    }
}
