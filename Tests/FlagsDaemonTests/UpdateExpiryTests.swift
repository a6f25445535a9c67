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

    /// A Pushwoosh source over a scripted fetcher whose disk cache is never written.
    static func pushwoosh(_ store: FlagStore) -> PushwooshProvider {
        PushwooshProvider(
            fetcher: ScriptedFetcher(), applicationCode: "ABCDE-12345", store: store,
            diskCache: FlagCache(directory: StateDirectory(path: "/nonexistent/pwflagsd-test")),
            logger: Logger(level: .err))
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

    @Test("A source's flags bring their expiry into the update even when the published status still says another")
    func theUpdateDoesNotDependOnWhatWasPublishedBefore() {
        let store = FlagStore()
        let clock = ManualClock()
        let source = Self.pushwoosh(store)
        let seen = Seen(store)
        // What a status published before the change would have left: an older fetch's expiry.
        source.restamp(.at(bootTime: 5000, clock: clock))
        source.fetched(FeatureFlagsResponse(flags: [Self.flag]), expiry: .at(bootTime: 9000, clock: clock))
        let expected = JSONValue.string(RefresherStatus.wallText(9000, clock: clock))
        #expect(seen.all == [expected])
        // An override changes the flags, not their source's expiry: its update carries the one in effect.
        store.setOverride(FlagOverride(key: "a", isEnabled: false))
        #expect(seen.all == [expected, expected])
        // The local file never expires, whatever was served before it.
        let file = LocalFileProvider(file: LocalFlagSource(path: nil, store: store, logger: Logger(level: .err)))
        file.serve(FlagSet(), expiry: .never)
        #expect(seen.all.last == .null)
        #expect(store.expiry.json == .null)
    }

    @Test("A retired source neither serves nor moves the expiry")
    func aRetiredSourceWritesNothing() {
        let store = FlagStore()
        let clock = ManualClock()
        let source = Self.pushwoosh(store)
        source.retire()
        source.fetched(FeatureFlagsResponse(flags: [Self.flag]), expiry: .at(bootTime: 9000, clock: clock))
        source.restamp(.at(bootTime: 9000, clock: clock))
        #expect(store.current.revision == 0)
        #expect(store.expiry.json == .null)
    }

    @Test("flagsChanged says the expiry of the update it tells")
    func theNotificationSaysTheUpdatesExpiry() {
        let table = SubscriptionTable()
        let connection = Connection(
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
