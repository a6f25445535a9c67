import FlagsCore
import FlagsProtocol
import TestSupport
import Testing

/// Every method's result: its one writer and its one reader agree, and the fast writers write the same bytes as
/// the general ones.
@Suite(.hangLimit) struct CallResultTests {
    static let flag = Flag(
        key: "new_checkout", isEnabled: true, ruleId: "r_1",
        properties: ["b": "x\ny", "a": ["columns": 2], "c": [1, true, nil]])
    static let other = Flag(key: "banner", isEnabled: false, ruleId: "")

    /// Writes `result`, reads the bytes back and checks the reader sees what was written.
    private func roundTrip<R: CallResult & Equatable>(
        _ result: R, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        var output: [UInt8] = []
        result.write(to: &output)
        let value = try JSONValue(parsing: output)
        #expect(R(result: value) == result, sourceLocation: sourceLocation)
        return String(decoding: output, as: UTF8.self)
    }

    @Test func getResultRoundTripsWithAndWithoutAFlag() throws {
        #expect(try roundTrip(GetResult(flag: nil)) == #"{"flag":null}"#)
        let text = try roundTrip(GetResult(flag: Self.flag))
        #expect(text == #"{"flag":"# + String(decoding: Self.flag.wireBytes, as: UTF8.self) + "}")
    }

    @Test func explainResultRoundTripsPresentAndAbsent() throws {
        var present = ExplainResult(key: "new_checkout")
        present.flag = Self.flag
        present.source = "pushwoosh"
        present.rule = .matched
        present.revision = 4
        present.changedAtRevision = 2
        present.subscriptions = 3
        present.fetchedAt = "2026-11-30T12:00:00Z"
        present.ageSeconds = 12.5
        present.expiresAt = "2026-12-01T12:00:00Z"
        present.lastError = StatusResult.LastError(status: 503, at: "2026-11-30T12:05:00Z")
        present.nextRefreshAt = "2026-11-30T13:00:00Z"
        let text = try roundTrip(present)
        // The flag object in the same bytes as `get` sends it.
        #expect(text.hasPrefix(#"{"flag":"# + String(decoding: Self.flag.wireBytes, as: UTF8.self) + ","))
        var absent = ExplainResult(key: "NEW_CHECKOUT")
        absent.absence = .caseDiffers
        absent.similarKeys = ["new_checkout"]
        absent.stale = true
        absent.partial = true
        absent.problem = "broken"
        _ = try roundTrip(absent)
        #expect(ExplainResult.Rule(ruleId: "") == .killed)
        #expect(ExplainResult.Rule(ruleId: "default") == .default)
        #expect(ExplainResult.Rule(ruleId: "r_1") == .matched)
    }

    @Test func metricsResultRoundTripsItsText() throws {
        #expect(try roundTrip(MetricsResult(text: "a 1\n# EOF\n")) == #"{"text":"a 1\n# EOF\n"}"#)
    }

    @Test func theFlagObjectKeepsTheProtocolMemberOrder() {
        #expect(
            String(decoding: Self.other.wireBytes, as: UTF8.self)
                == #"{"key":"banner","enabled":false,"ruleId":"","properties":{}}"#)
    }

    @Test("An overridden flag carries its source and the source's own value, and reads back the same")
    func overriddenFlagRoundTrips() throws {
        let overridden = FlagOverride(key: "banner", isEnabled: true, properties: ["n": 1]).applied(
            to: Flag(key: "banner", isEnabled: false, ruleId: "", source: .pushwoosh))
        let text = try roundTrip(GetResult(flag: overridden))
        #expect(
            text
                == #"{"flag":{"key":"banner","enabled":true,"ruleId":"override","properties":{"n":1},"source":"override","#
                + #""sourceValue":{"enabled":false,"ruleId":"","properties":{},"source":"pushwoosh"}}}"#)
        let added = FlagOverride(key: "new").applied(to: nil)
        #expect(
            try roundTrip(GetResult(flag: added))
                == #"{"flag":{"key":"new","enabled":false,"ruleId":"override","properties":{},"source":"override","#
                + #""sourceValue":null}}"#)
    }

    @Test func overrideResultsRoundTrip() throws {
        #expect(try roundTrip(ClearOverrideResult(cleared: [])) == #"{"cleared":[]}"#)
        #expect(try roundTrip(ClearOverrideResult(cleared: ["a", "b"])) == #"{"cleared":["a","b"]}"#)
        let list = OverrideList(overrides: [
            FlagOverride(key: "b", isEnabled: nil, properties: ["x": [1]]), FlagOverride(key: "a", isEnabled: true),
        ])
        #expect(
            try roundTrip(list)
                == #"{"overrides":[{"key":"a","enabled":true,"properties":{}},"#
                + #"{"key":"b","enabled":null,"properties":{"x":[1]}}]}"#)
        #expect(try roundTrip(LogImpressionResult.overridden) == #"{"outcome":"overridden"}"#)
    }

    @Test(arguments: [(true, true), (true, false), (false, true), (false, false)])
    func isEnabledResultRoundTrips(enabled: Bool, found: Bool) throws {
        #expect(
            try roundTrip(IsEnabledResult(enabled: enabled, found: found))
                == #"{"enabled":\#(enabled),"found":\#(found)}"#)
    }

    @Test(arguments: [#""r1""#, "42", "-7"])
    func fastWritersWriteWhatTheGeneralWriterWrites(id: String) {
        let requestID = RequestID(text: Array(id.utf8)[...])
        for flag in [Self.flag, nil] {
            var fast: [UInt8] = []
            GetResult.writeLine(id: requestID.text, encodedFlag: flag?.wireBytes, to: &fast)
            var general: [UInt8] = []
            Message.writeResult(id: requestID, result: GetResult(flag: flag), to: &general)
            #expect(fast == general)
        }
        for (enabled, found) in [(true, true), (false, false), (true, false)] {
            var fast: [UInt8] = []
            IsEnabledResult.writeLine(id: requestID.text, enabled: enabled, found: found, to: &fast)
            var general: [UInt8] = []
            Message.writeResult(id: requestID, result: IsEnabledResult(enabled: enabled, found: found), to: &general)
            #expect(fast == general)
        }
    }

    @Test func everyListingWritesTheFlagObjectsInTheSameBytes() throws {
        let flags = [Self.other, Self.flag]
        let objects = flags.map { String(decoding: $0.wireBytes, as: UTF8.self) }.joined(separator: ",")
        #expect(try roundTrip(FlagListing(revision: 3, flags: flags)) == #"{"revision":3,"flags":[\#(objects)]}"#)
        #expect(
            try roundTrip(FlagListing(revision: 3, flags: flags, fromNetwork: true))
                == #"{"revision":3,"flags":[\#(objects)],"fromNetwork":true}"#)
        #expect(
            try roundTrip(FlagListing(revision: 3, flags: flags, subscription: "s1", expiresAt: .null))
                == #"{"subscription":"s1","expiresAt":null,"revision":3,"flags":[\#(objects)]}"#)
        #expect(
            try roundTrip(FlagListing(epoch: "e1", revision: 3, flags: flags))
                == #"{"epoch":"e1","revision":3,"flags":[\#(objects)]}"#)
    }

    @Test func anUnchangedListenListsNoFlags() throws {
        let listing = FlagListing(
            epoch: "e1", revision: 3, flags: [], subscription: "s1", expiresAt: .null, unchanged: true)
        #expect(
            try roundTrip(listing)
                == #"{"subscription":"s1","expiresAt":null,"epoch":"e1","revision":3,"unchanged":true}"#
        )
        #expect(listing.position == StreamPosition(epoch: "e1", revision: 3))
        #expect(FlagListing(revision: 3, flags: []).position == nil)
    }

    @Test func controlResultsRoundTrip() throws {
        #expect(try roundTrip(SetUserIdResult(userId: "al\"ice")) == #"{"userId":"al\"ice"}"#)
        #expect(
            try roundTrip(SetUserIdResult(userId: "bob", heldUntil: "2026-12-01T15:00:00Z"))
                == #"{"userId":"bob","heldUntil":"2026-12-01T15:00:00Z"}"#)
        #expect(try roundTrip(SetAppStateResult(sessionStarted: true)) == #"{"sessionStarted":true}"#)
        #expect(try roundTrip(PushRegisteredResult(refreshStarted: false)) == #"{"refreshStarted":false}"#)
        #expect(try roundTrip(EmptyResult()) == "{}")
    }

    @Test(arguments: [
        (LogImpressionResult.sent, #"{"outcome":"sent"}"#), (.duplicate, #"{"outcome":"duplicate"}"#),
        (.noFlag, #"{"outcome":"noFlag"}"#), (.logged, #"{"outcome":"logged"}"#),
        (.failed(status: 503), #"{"outcome":"failed","status":503}"#),
    ])
    func logImpressionResultRoundTrips(result: LogImpressionResult, text: String) throws {
        #expect(try roundTrip(result) == text)
    }

    @Test func statusRoundTripsWithMembersSortedByName() throws {
        var status = StatusResult()
        status.version = "1.0"
        status.source = "pushwoosh"
        status.applicationCode = "ABCDE-12345"
        status.hwid = "h"
        status.userId = "u"
        status.flags = 2
        status.revision = 7
        status.fetchedAt = "2026-11-29T12:00:00Z"
        status.lastError = .init(status: 503, at: "2026-11-29T12:05:00Z")
        status.impressions = .init(sent: 4, duplicate: 9, failed: 1, logged: 3)
        status.cacheError = .init(reason: "disk full", at: "2026-11-29T12:06:00Z")
        let text = try roundTrip(status)
        let names = try #require(try JSONValue(parsing: Array(text.utf8)).objectValue).keys.sorted()
        #expect(
            text.hasPrefix(#"{"appState":"foreground","applicationCode":"ABCDE-12345","bus":null,"cacheError":{"at":"#))
        #expect(names.count == 24)
        #expect(names.contains("heldUntil"))
        #expect(text.contains(#""seed":null"#))
        #expect(text.contains(#""impressions":{"duplicate":9,"failed":1,"logged":3,"sent":4}"#))
        #expect(StatusResult(result: ["expiresAt": "2031-01-01T00:00:00Z"])?.expiresAt == "2031-01-01T00:00:00Z")
        #expect(StatusResult(result: [1, 2]) == nil)
        status.seed = .init(file: "/s.json", exportedAt: nil, flags: 3, serving: true)
        let withSeed = try roundTrip(status)
        #expect(withSeed.contains(#""seed":{"exportedAt":null,"file":"/s.json","flags":3,"serving":true}"#))
        #expect(StatusResult(result: try JSONValue(parsing: Array(withSeed.utf8)))?.seed == status.seed)
        status.bus = .init(bus: "system", name: "io.github.pwflagsd.Flags1", state: "serving")
        let withBus = try roundTrip(status)
        #expect(
            withBus.contains(
                #""bus":{"bus":"system","name":"io.github.pwflagsd.Flags1","reason":null,"state":"serving"}"#))
        let parsed = try JSONValue(parsing: Array(withBus.utf8))
        #expect(StatusResult(result: parsed)?.bus == status.bus)
    }

    @Test func aReloadErrorCarriesItsProblems() throws {
        let error = RPCError.invalidConfiguration(problems: ["a.conf:3: bad", "b.conf:1: worse"])
        #expect(error.code == RPCError.invalidParamsCode)
        #expect(RPCError(json: error.jsonValue)?.problems == ["a.conf:3: bad", "b.conf:1: worse"])
        #expect(RPCError.unknownSubscription.problems == nil)
    }
}
