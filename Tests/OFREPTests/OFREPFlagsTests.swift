import FlagsCore
import OFREP
import TestSupport
import Testing

/// How Pushwoosh flags read as OFREP evaluations.
@Suite(.hangLimit) struct OFREPFlagsTests {
    static let checkout = Flag(
        key: "new_checkout", isEnabled: true, ruleId: "r_1",
        properties: ["color": "green", "max": 3, "ratio": 0.5, "layout": ["columns": 2], "gone": nil])
    static let banner = Flag(key: "banner", isEnabled: false, ruleId: "default")
    static let killed = Flag(
        key: "killed", isEnabled: false, ruleId: "", properties: ["color": "grey", "quote\"d\n": "x"],
        source: .pushwoosh)

    let flags = OFREPFlags(FlagSet([checkout, banner, killed]))

    @Test func aSeedFlagIsCachedAndAnOverrideStatic() throws {
        let seeded = Flag(key: "s", isEnabled: true, ruleId: "r_1", source: .seed)
        #expect(OFREPFlags.reason(of: seeded) == "CACHED")
        let evaluation = try #require(OFREPFlags(FlagSet([seeded])).evaluation(of: "s"))
        #expect(evaluation["reason"] == "CACHED")
        #expect(evaluation["metadata"]?["source"] == "seed")
        #expect(OFREPFlags.reason(of: Flag(key: "o", isEnabled: true, ruleId: "r_1", source: .override)) == "STATIC")
    }

    @Test func aFlagIsABooleanWithTheReasonOfItsRule() throws {
        let checkout = try #require(flags.evaluation(of: "new_checkout"))
        #expect(checkout["value"] == true)
        #expect(checkout["reason"] == "TARGETING_MATCH")
        #expect(checkout["variant"] == "r_1")
        #expect(checkout["metadata"] == ["ruleId": "r_1"])
        let banner = try #require(flags.evaluation(of: "banner"))
        #expect(banner["value"] == false)
        #expect(banner["reason"] == "DEFAULT")
        #expect(banner["variant"] == "default")
        let killed = try #require(flags.evaluation(of: "killed"))
        #expect(killed["reason"] == "DISABLED")
        #expect(killed["variant"] == "killed")
    }

    @Test func propertiesReadAsTypedFlagsUnderKeyDotProperty() throws {
        #expect(flags.evaluation(of: "new_checkout.color")?["value"] == "green")
        #expect(flags.evaluation(of: "new_checkout.max")?["value"] == 3)
        #expect(flags.evaluation(of: "new_checkout.ratio")?["value"] == 0.5)
        #expect(flags.evaluation(of: "new_checkout.layout")?["value"] == ["columns": 2])
        let color = try #require(flags.evaluation(of: "new_checkout.color"))
        #expect(color["reason"] == "TARGETING_MATCH")
        #expect(color["metadata"] == ["ruleId": "r_1", "flagKey": "new_checkout", "property": "color"])
        #expect(flags.evaluation(of: "killed.color")?["reason"] == "DISABLED")
    }

    @Test func aNullPropertyHasNoValueSoTheCodeDefaultApplies() throws {
        let gone = try #require(flags.evaluation(of: "new_checkout.gone"))
        #expect(gone["value"] == nil)
        #expect(gone["reason"] == "TARGETING_MATCH")
    }

    @Test func anOverriddenFlagIsStaticAndSaysItsSource() throws {
        let forced = Flag(
            key: "banner", isEnabled: true, ruleId: "override", properties: ["color": "red"], source: .override,
            sourceValue: FlagValue(isEnabled: false, ruleId: "default", source: .file))
        var checkout = Self.checkout
        checkout.source = .pushwoosh
        let set = OFREPFlags(FlagSet([forced, checkout]))
        let banner = try #require(set.evaluation(of: "banner"))
        #expect(banner["value"] == true)
        #expect(banner["reason"] == "STATIC")
        #expect(banner["metadata"]?["source"] == "override")
        #expect(set.evaluation(of: "banner.color")?["reason"] == "STATIC")
        #expect(set.evaluation(of: "new_checkout")?["metadata"]?["source"] == "pushwoosh")
    }

    @Test func metadataHoldsScalarsOnly() throws {
        let body = try JSONValue(parsing: try #require(flags.bulkBody))
        for evaluation in try #require(body["flags"]?.arrayValue) {
            for value in evaluation["metadata"]?.objectValue?.values ?? [:].values {
                #expect(value.arrayValue == nil && value.objectValue == nil && !value.isNull)
            }
        }
    }

    @Test func aRealFlagWinsOverAPropertyPathOfTheSameKey() {
        let parent = Flag(key: "a", isEnabled: true, ruleId: "r", properties: ["b": "property"])
        let dotted = Flag(key: "a.b", isEnabled: false, ruleId: "default")
        let set = OFREPFlags(FlagSet([parent, dotted]))
        #expect(set.evaluation(of: "a.b")?["value"] == false)
    }

    @Test func theETagChangesExactlyWhenTheBulkBodyDoes() {
        let same = OFREPFlags(FlagSet([Self.killed, Self.banner, Self.checkout]))
        #expect(same.bulkETag == flags.bulkETag)
        #expect(same.bulkBody == flags.bulkBody)
        var changed = Self.checkout
        changed.properties["color"] = "red"
        let other = OFREPFlags(FlagSet([changed, Self.banner, Self.killed]))
        #expect(other.bulkETag != flags.bulkETag)
    }

    @Test func theBulkBodyListsEveryEvaluationSortedByKey() throws {
        let body = try JSONValue(parsing: try #require(flags.bulkBody))
        let keys = try #require(body["flags"]?.arrayValue).compactMap { $0["key"]?.stringValue }
        #expect(keys == keys.sorted())
        #expect(keys.count == 3 + 5 + 2)
    }

    @Test func ifNoneMatchMatchesListsWeakTagsAndTheStar() {
        guard let tag = flags.bulkETag else {
            Issue.record("no bulk answer")
            return
        }
        #expect(tag.isMatched(byIfNoneMatch: [tag.quoted]))
        #expect(tag.isMatched(byIfNoneMatch: ["\"other\", W/\(tag.quoted)"]))
        #expect(tag.isMatched(byIfNoneMatch: ["*"]))
        #expect(!tag.isMatched(byIfNoneMatch: ["\"other\""]))
        #expect(!tag.isMatched(byIfNoneMatch: []))
    }

    @Test func aSingleEvaluationMatchesItsBulkEntry() throws {
        let body = try JSONValue(parsing: try #require(flags.bulkBody))
        for entry in try #require(body["flags"]?.arrayValue) {
            let key = try #require(entry["key"]?.stringValue)
            #expect(flags.evaluation(of: key) == entry)
            var written: [UInt8] = []
            flags.evaluation(of: key)?.write(to: &written)
            let bulk = try #require(flags.bulkBody)
            #expect(bulk.firstRange(of: written) != nil, "\(key) is not written byte for byte as in the bulk answer")
        }
        #expect(flags.evaluation(of: "new_checkout.") == nil)
        #expect(flags.evaluation(of: "nothing.color") == nil)
    }

    @Test func betweenTwoPropertyPathsTheFlagThatSortsFirstWins() {
        let short = Flag(key: "a", isEnabled: true, ruleId: "r", properties: ["b.c": "from a"])
        let long = Flag(key: "a.b", isEnabled: true, ruleId: "r", properties: ["c": "from a.b"])
        let set = OFREPFlags(FlagSet([long, short]))
        #expect(set.evaluation(of: "a.b.c")?["value"] == "from a")
        #expect(set.bulkBody.map { String(decoding: $0, as: UTF8.self).contains("from a.b") } == false)
    }

    /// One flag with a long key and many small properties reads as key length x properties bytes: the bulk
    /// answer is built only up to its bound and refused past it, while single evaluations stay cheap.
    @Test func aBulkAnswerPastItsBoundIsRefusedAndSinglesStillAnswer() throws {
        let key = String(repeating: "k", count: 30_000)
        var properties: [String: JSONValue] = [:]
        for index in 0..<3000 { properties["p\(index)"] = .number(1) }
        let amplified = Flag(key: key, isEnabled: true, ruleId: "r", properties: properties)
        let set = OFREPFlags(FlagSet([amplified, Self.banner]), maximumBulkBytes: 1 << 20)
        guard case .tooLarge(let built) = set.bulk else {
            Issue.record("the bulk answer was built whole")
            return
        }
        #expect(built <= (1 << 20) + 4 * 30_100)
        #expect(set.evaluation(of: key + ".p7")?["value"] == 1)
        #expect(set.evaluation(of: "banner")?["value"] == false)
        let small = OFREPFlags(FlagSet([Self.banner]), maximumBulkBytes: 1 << 20)
        #expect(small.bulkBody != nil)
    }
}
