import FlagsCore
import FlagsProtocol
import Foundation
import PushwooshAPI
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// A change carries its own `expiresAt`: what a subscriber is told comes with the update the store publishes,
/// never from a status read at a moment that may belong to another change (R9, R15).
@Suite(.hangLimit) struct UpdateExpiryTests {
    static let flag = Flag(key: "a", isEnabled: true, ruleId: "r1")

    /// Every update's `expiresAt`, as an observer of `store` reads it right at publish.
    final class Seen: Sendable {
        private let values = Locked<[JSONValue]>([])

        init(_ store: FlagStore) {
            _ = store.observe { update in self.values.withLock { $0.append(update.expiry.json) } }
        }

        var all: [JSONValue] { values.withLock { $0 } }
    }

    /// The feed of a Pushwoosh source over a scripted fetcher; its answers here are partial, never written to disk.
    static func pushwooshFeed(_ store: FlagStore, clock: ManualClock) -> FlagFeed {
        let source = PushwooshProvider(
            fetcher: ScriptedFetcher(), applicationCode: "ABCDE-12345",
            diskCache: FlagCache(directory: StateDirectory(path: "/nonexistent/pwflagsd-test")))
        return FlagFeed(
            provider: source, store: store, clock: clock, bootID: nil, logger: Logger(level: .err),
            initial: RefresherStatus(userId: "u", foreground: true, session: 0), evaluations: EvaluationTally())
    }

    @Test("Each update the refresher causes carries the expiry of its own fetch, seen by a subscriber at publish")
    func fetchesCarryTheirExpiry() async throws {
        let rig = try RefresherClockTests.Rig { $0.cacheMaxAge = .seconds(3 * 3600) }
        defer { rig.directory.remove() }
        let seen = Seen(rig.store)
        await rig.startAndFetch()
        let firstFetch = try #require(rig.refresher.status.withLock { $0.fetchedAt })
        let first = JSONValue.string(RefresherStatus.wallText(firstFetch + 3 * 3600, clock: rig.clock))
        #expect(seen.all == [first])

        rig.fetcher.answer(.success(FeatureFlagsResponse(flags: [Flag(key: "a", isEnabled: false, ruleId: "r2")])))
        rig.clock.advance(by: 600)
        #expect(try await rig.refresher.refresh().get() == true)
        let secondFetch = try #require(rig.refresher.status.withLock { $0.fetchedAt })
        #expect(secondFetch > firstFetch)
        let second = JSONValue.string(RefresherStatus.wallText(secondFetch + 3 * 3600, clock: rig.clock))
        #expect(seen.all == [first, second])
        // `status` and `listen` read what the store keeps: the same as the last update said.
        #expect(rig.store.expiry.json == second)
    }

    @Test("A source's flags bring their expiry into the update even when the store kept another before")
    func theUpdateDoesNotDependOnWhatWasPublishedBefore() async throws {
        let store = FlagStore()
        let clock = ManualClock()
        var feed = Self.pushwooshFeed(store, clock: clock)
        let seen = Seen(store)
        // What an earlier change of `CacheMaxAge` would have left: an older fetch's expiry.
        feed.restamp(.at(bootTime: 5000, clock: clock))
        feed.received(
            FeatureFlagsResponse(flags: [Self.flag], partial: true), userId: "u",
            expiry: .at(bootTime: 9000, clock: clock),
            timers: RefresherStatus(userId: "u", fetchedAt: 1000, foreground: true, session: 1))
        let expected = JSONValue.string(RefresherStatus.wallText(9000, clock: clock))
        #expect(seen.all == [expected])
        // An override changes the flags, not their source's expiry: its update carries the one in effect.
        store.setOverride(FlagOverride(key: "a", isEnabled: false))
        #expect(seen.all == [expected, expected])
        // The local file never expires, whatever was served before it: its refresher serves it without an expiry.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("flags.json", #"{"flags":[{"key":"b","enabled":true,"rule_id":"r1"}]}"#)
        let file = Refresher(
            provider: LocalFileProvider(
                file: FlagsFile(path: directory.file("flags.json"), logger: Logger(level: .err))),
            store: store, stateDirectory: StateDirectory(path: directory.path), configuration: Configuration(),
            hwid: "hwid-1", clock: clock, logger: Logger(level: .err))
        await file.start()
        #expect(store.current.flags.sorted.map(\.key) == ["a", "b"], "the override of a, and the file's b")
        #expect(seen.all.last == .null)
        #expect(store.expiry.json == .null)
    }

    @Test("A retired refresher neither serves nor moves the expiry, whatever a reload or the wall clock asks")
    func aRetiredRefresherWritesNothing() async throws {
        let rig = try RefresherClockTests.Rig { $0.cacheMaxAge = .seconds(3 * 3600) }
        defer { rig.directory.remove() }
        await rig.startAndFetch()
        let revision = rig.store.current.revision
        let expiry = try #require(Self.bootTime(rig.store.expiry))
        await rig.refresher.retire()
        var configuration = Configuration()
        configuration.applicationCode = "ABCDE-12345"
        configuration.cacheMaxAge = .seconds(3600)
        await rig.refresher.update(configuration: configuration)
        rig.clock.setWall(by: RefresherClockTests.day)
        await rig.refresher.wallClockChanged()
        rig.clock.advance(by: 4 * 3600)
        await rig.refresher.tick()
        #expect(rig.store.current.revision == revision)
        #expect(Self.bootTime(rig.store.expiry) == expiry)
    }

    /// The boot-clock time of `expiry`, which a wall-clock change does not move; nil when it never expires.
    static func bootTime(_ expiry: FlagExpiry) -> Double? {
        guard case .at(let bootTime, _) = expiry else { return nil }
        return bootTime
    }

    @Test("flagsChanged says the expiry of the update it tells")
    func theNotificationSaysTheUpdatesExpiry() {
        let table = SubscriptionTable()
        let connection = LineConnection(
            id: 1, fd: -1, peer: PeerCredentials(pid: 1, uid: 1000, gid: 1000), maxLineBytes: 1024)
        let before = FlagSnapshot(epoch: "e1", revision: 1, flags: FlagSet([Self.flag]))
        table.listen(
            connection, keys: nil, requestID: nil, limits: ServerLimits(), snapshot: before, expiresAt: { .null })
        let clock = ManualClock()
        let newer = FlagSet([Flag(key: "a", isEnabled: false, ruleId: "r2")])
        let update = FlagUpdate(
            snapshot: FlagSnapshot(epoch: "e1", revision: 2, flags: newer), diff: before.flags.diff(to: newer),
            expiry: .at(bootTime: 9000, clock: clock))
        table.fanOut(update, to: [connection]) { _ in }
        let text = String(decoding: connection.output.unsent, as: UTF8.self)
        #expect(text.contains(#""expiresAt":"\#(RefresherStatus.wallText(9000, clock: clock))""#))
    }
}
