import FlagsCore
import FlagsProtocol
import TestSupport
import Testing

@testable import FlagsDaemon

/// `FlagExplainer` without a daemon: the reasons an absent key is given, in the order they are checked, and the
/// revision a key last changed at as the store's observer saw it.
@Suite(.hangLimit) struct FlagExplainerTests {
    static func explain(
        _ key: String, flags: [Flag], fetchedAt: String? = nil, expired: Bool = false, store: FlagStore = FlagStore()
    ) -> ExplainResult {
        var status = StatusResult()
        status.fetchedAt = fetchedAt
        let explainer = FlagExplainer(
            snapshot: FlagSnapshot(epoch: store.epoch, revision: 1, flags: FlagSet(flags)), status: status,
            ageSeconds: nil,
            expired: expired, changes: FlagChangeLog(observing: store), subscriptions: 0, servedBy: .pushwoosh)
        return explainer.explain(key: key)
    }

    @Test func absentKeysAreExplainedInOrder() {
        let flag = Flag(key: "a", isEnabled: true, ruleId: "r")
        #expect(Self.explain("A", flags: [flag]).absence == .caseDiffers)
        #expect(Self.explain("b", flags: [flag]).absence == .notInResponse)
        #expect(Self.explain("b", flags: [], expired: true).absence == .expired)
        #expect(Self.explain("b", flags: []).absence == .noFlags)
        // A fetch that brought no flags at all: the plan has none, or all are archived.
        #expect(Self.explain("b", flags: [], fetchedAt: "2026-11-30T12:00:00Z").absence == .notInResponse)
        let present = Self.explain("a", flags: [flag])
        #expect(present.absence == nil)
        #expect(present.rule == .matched)
        #expect(present.source == "pushwoosh")
    }

    @Test func theChangeLogKeepsTheRevisionOfEachKeysLastChangeOrRemoval() {
        let store = FlagStore()
        let log = FlagChangeLog(observing: store)
        store.replace(
            with: FlagSet([Flag(key: "a", isEnabled: true, ruleId: "r"), Flag(key: "b", isEnabled: true, ruleId: "r")]))
        store.replace(with: FlagSet([Flag(key: "a", isEnabled: false, ruleId: "r")]))
        #expect(log.revision(of: "a") == 2)
        #expect(log.revision(of: "b") == 2)
        #expect(log.revision(of: "c") == nil)
        // A log that starts late counts the keys already there as changed at the store's revision then.
        let late = FlagChangeLog(observing: store)
        #expect(late.revision(of: "a") == 2)
    }
}
