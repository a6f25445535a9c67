import FlagsCore
import PushwooshAPI
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// R15 for a cache loaded at start: it is served until its fetch time plus `CacheMaxAge`, not the daemon's start
/// plus `CacheMaxAge`, and its expiry tells the listeners.
@Suite(.hangLimit) struct CacheAgeExpiryTests {
    static let minute = 60.0
    static let day = 86400.0

    /// Every update's removed keys, as an observer of the store sees them.
    final class Removals: Sendable {
        private let removed = Locked<[[String]]>([])

        init(_ store: FlagStore) {
            _ = store.observe { update in self.removed.withLock { $0.append(update.diff.removed) } }
        }

        var all: [[String]] { removed.withLock { $0 } }
    }

    @Test(
        "R15: a cache 23 h 55 min old at start is gone 10 minutes later, and the listeners are told",
        arguments: [true, false])
    func cacheLoadedAtStartExpiresByItsFetchTime(sameBoot: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fetched = (boot: 1000.0, wall: 1_800_000_000.0)
        let age = Self.day - 5 * Self.minute
        try RefresherClockTests.writeCache(in: directory, wall: fetched.wall, bootID: "boot-a", boot: fetched.boot)
        // The same boot ages the cache by the boot clock; another boot by the wall clock: both must agree.
        let clock = ManualClock(boot: sameBoot ? fetched.boot + age : 30, wall: fetched.wall + age)
        let rig = try RefresherClockTests.Rig(
            directory: directory, clock: clock, bootID: sameBoot ? "boot-a" : "boot-b")
        let removals = Removals(rig.store)
        // The server cannot be reached: nothing but the cache's age decides what is served.
        rig.fetcher.answer(.failure(.noReply("offline")))
        await rig.refresher.start()
        await rig.refresher.tick()
        #expect(rig.served)
        #expect(removals.all.allSatisfy { $0.isEmpty })

        rig.clock.advance(by: 5 * Self.minute - 1)
        await rig.refresher.tick()
        #expect(rig.served, "expired before its fetch time plus CacheMaxAge")
        rig.clock.advance(by: 5 * Self.minute + 1)
        await rig.refresher.tick()
        #expect(!rig.served, "still served 24 h 5 min after its fetch")
        #expect(removals.all.last == ["new_checkout"])
    }
}
