import FlagsCore
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// `FlagStore` layers overrides over the source's flags: the one place the visible set changes, so every reader
/// and every observer sees overrides (R9 for setting, clearing and a source update under an override).
@Suite(.hangLimit) struct FlagStoreOverrideTests {
    static let alpha = Flag(key: "alpha", isEnabled: true, ruleId: "r_1", properties: ["n": 1])

    /// The updates a store's observer heard.
    final class Heard: Sendable {
        let updates = Locked<[FlagUpdate]>([])

        func withLock<T>(_ body: ([FlagUpdate]) -> T) -> T { updates.withLock { body($0) } }
    }

    static func observed(_ store: FlagStore) -> Heard {
        let heard = Heard()
        _ = store.observe { update in heard.updates.withLock { $0.append(update) } }
        return heard
    }

    @Test("The source's flags are marked with their source; an override is published over them, and cleared")
    func setAndClearArePublished() {
        let store = FlagStore()
        store.replace(with: FlagSet([Self.alpha]), from: .file)
        let heard = Self.observed(store)
        #expect(store.current.flags["alpha"]?.source == .file)
        let served = store.setOverride(FlagOverride(key: "alpha", isEnabled: false))
        #expect(store.current.flags["alpha"] == served)
        #expect(served.sourceValue?.source == .file)
        #expect(store.clearOverride("alpha") == ["alpha"])
        #expect(store.current.flags["alpha"]?.source == .file)
        #expect(heard.withLock { $0.map(\.snapshot.revision) } == [2, 3])
        #expect(store.clearOverride("alpha") == [])
        #expect(store.current.revision == 3)
    }

    @Test("R9: the same override twice, or a source update that changes nothing visible, notifies no one")
    func noEventWithoutAVisibleChange() {
        let store = FlagStore()
        store.replace(with: FlagSet([Self.alpha]), from: .pushwoosh)
        store.setOverride(FlagOverride(key: "alpha", isEnabled: false))
        let heard = Self.observed(store)
        store.setOverride(FlagOverride(key: "alpha", isEnabled: false))
        store.replace(with: FlagSet([Self.alpha]), from: .pushwoosh)
        #expect(heard.withLock { $0.isEmpty })
        // The source's value changes under the override: what `get` returns changed (its sourceValue).
        var moved = Self.alpha
        moved.properties["n"] = 2
        store.replace(with: FlagSet([moved]), from: .pushwoosh)
        let changed = heard.withLock { $0.first?.diff.changed }
        #expect(changed?.first?.sourceValue?.properties == ["n": 2])
        #expect(changed?.first?.properties == ["n": 2])
    }

    @Test("Overrides kept from the previous run apply from the start, and survive a source that serves nothing")
    func startsWithKeptOverrides() {
        let store = FlagStore(overrides: [FlagOverride(key: "qa", isEnabled: true)])
        #expect(store.current.flags["qa"]?.isEnabled == true)
        store.replace(with: FlagSet([Self.alpha]), from: .pushwoosh)
        store.replace(with: FlagSet())
        #expect(store.current.flags.count == 1)
        #expect(store.overrides == [FlagOverride(key: "qa", isEnabled: true)])
        #expect(store.clearOverride(nil) == ["qa"])
        #expect(store.current.flags.isEmpty)
    }

    @Test func theNumberOfOverridesIsBounded() {
        let store = FlagStore(overrides: [FlagOverride(key: "a"), FlagOverride(key: "b")])
        #expect(store.mayOverride("a", limit: 2))
        #expect(!store.mayOverride("c", limit: 2))
        #expect(store.mayOverride("c", limit: 3))
    }
}
