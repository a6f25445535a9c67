import FlagsCore
import FlagsProtocol
import Foundation
import PushwooshAPI
import TestSupport
import Testing

@testable import FlagsDaemon

/// The refresher with a clock whose wall and boot readings move apart: intervals run on the boot
/// clock, the wall clock only stamps what people read and what the disk keeps.
@Suite(.hangLimit) struct RefresherClockTests {
    static let flag = Flag(key: "new_checkout", isEnabled: true, ruleId: "r_1", properties: [:])
    static let hour = 3600.0
    static let day = 86400.0
    static let year = 365 * 86400.0

    /// A refresher on `clock` in `directory`, with `edit` applied to the default configuration.
    struct Rig {
        let directory: TemporaryDirectory
        let clock: ManualClock
        let fetcher = ScriptedFetcher()
        let store = FlagStore()
        let refresher: Refresher

        init(
            directory: TemporaryDirectory? = nil,
            clock: ManualClock = ManualClock(),
            bootID: String = "boot-a",
            _ edit: (inout Configuration) -> Void = { _ in }
        ) throws {
            self.directory = try directory ?? TemporaryDirectory()
            self.clock = clock
            var configuration = Configuration()
            configuration.applicationCode = "ABCDE-12345"
            // The SDK's timing, which these tests pin; the fleet spread has its own tests.
            configuration.refreshSpread = .zero
            configuration.sessionStartDelay = .zero
            edit(&configuration)
            fetcher.answer(.success(FeatureFlagsResponse(flags: [RefresherClockTests.flag])))
            refresher = Refresher(
                provider: PushwooshProvider(
                    fetcher: fetcher, applicationCode: configuration.applicationCode,
                    diskCache: FlagCache(directory: StateDirectory(path: self.directory.path))),
                store: store,
                stateDirectory: StateDirectory(path: self.directory.path),
                configuration: configuration, hwid: "hwid-1", clock: clock, bootID: bootID, jitter: { 0.5 },
                logger: Logger(level: .err))
        }

        var served: Bool { store.current.flags["new_checkout"] != nil }

        /// R15 at the boundary: `seconds` from now less one the flags still serve; at `seconds` they are gone.
        func expectServed(forAnother seconds: Double) async {
            clock.advance(by: seconds - 1)
            await refresher.tick()
            #expect(served, "gone a second before their end")
            clock.advance(by: 1)
            await refresher.tick()
            #expect(!served, "still served at their end")
        }

        /// The cache file as the daemon wrote it.
        var cache: JSONValue? {
            FileManager.default.contents(atPath: directory.file(FlagCache.file)).flatMap {
                try? JSONValue(parsing: [UInt8]($0))
            }
        }

        /// `status.fetchedAt` as Unix seconds.
        func statusFetchedAt() -> Double? {
            var status = StatusResult()
            refresher.status.withLock { $0 }.fill(&status, clock: clock)
            guard let text = status.fetchedAt else { return nil }
            return (try? Date(text, strategy: .iso8601))?.timeIntervalSince1970
        }

        /// Starts and lets the session start's request complete.
        func startAndFetch() async {
            await refresher.start()
            await refresher.tick()
        }
    }

    /// Writes a cache file as a daemon of `bootID` would have, fetched at `wall` (and `boot` on that boot's clock).
    static func writeCache(in directory: TemporaryDirectory, wall: Double, bootID: String?, boot: Double?) throws {
        let entry = FlagCache.Entry(
            applicationCode: "ABCDE-12345", userId: "hwid-1", fetchedAt: wall, bootID: bootID, bootFetchedAt: boot,
            flags: [flag])
        try FlagCache(directory: StateDirectory(path: directory.path)).store(entry)
    }

    // MARK: The wall clock set back or forward

    @Test("Wall clock set back 2 h: interval requests and refresh calls go on; flags expire at CacheMaxAge")
    func wallSetBackKeepsRefreshing() async throws {
        let rig = try Rig { $0.cacheMaxAge = .seconds(3 * 3600) }
        defer { rig.directory.remove() }
        await rig.startAndFetch()
        #expect(rig.fetcher.fetches.count == 1)
        rig.clock.setWall(by: -2 * Self.hour)
        await rig.refresher.wallClockChanged()
        // Past RefreshThrottle a caller's refresh goes to the network.
        rig.clock.advance(by: 301)
        #expect(try await rig.refresher.refresh().get() == true)
        #expect(rig.fetcher.fetches.count == 2)
        // RefreshInterval after that fetch, the interval request goes.
        rig.clock.advance(by: Self.hour)
        await rig.refresher.tick()
        #expect(rig.fetcher.fetches.count == 3)
        // With the server gone, the flags last CacheMaxAge of real time from the last fetch, not 2 h more.
        rig.fetcher.answer(.failure(.httpStatus(503)))
        await rig.expectServed(forAnother: 3 * Self.hour)
        #expect(rig.cache == nil)
    }

    @Test("Wall clock set forward a year: nothing expires early, and status shows times by the new wall clock")
    func wallSetForwardExpiresNothing() async throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        await rig.startAndFetch()
        let fetchedWall = rig.clock.wallNow()
        rig.clock.advance(by: 60)
        rig.clock.setWall(by: Self.year)
        await rig.refresher.wallClockChanged()
        await rig.refresher.tick()
        #expect(rig.served)
        #expect(rig.fetcher.fetches.count == 1)
        // The fetch was 60 s ago, by the wall clock as it reads now.
        let shown = try #require(rig.statusFetchedAt())
        #expect(abs(shown - (rig.clock.wallNow() - 60)) < 1)
        // The disk cache's wall time was re-stamped the same way, for the next boot.
        let stamped = try #require(rig.cache?["fetchedAt"]?.numberValue)
        #expect(abs(stamped - (fetchedWall + Self.year)) < 1e-6)
    }

    @Test("Suspend: a boot-clock jump past CacheMaxAge expires the flags and sends a request right after resume")
    func suspendExpiresAndRefreshes() async throws {
        let rig = try Rig()
        defer { rig.directory.remove() }
        await rig.startAndFetch()
        rig.fetcher.answer(.failure(.noReply("offline after resume")))
        rig.clock.advance(by: Self.day + Self.hour)
        await rig.refresher.wallClockChanged()
        await rig.refresher.tick()
        #expect(!rig.served)
        #expect(rig.fetcher.fetches.count == 2)
    }

    // MARK: The disk cache at start

    @Test("Same boot: a cache is aged by the boot clock, even with the wall clock set back since")
    func sameBootCacheUsesTheBootClock() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Self.writeCache(in: directory, wall: 1_800_000_000, bootID: "boot-a", boot: 1000)
        let fresh = try Rig(directory: directory, clock: ManualClock(boot: 1600, wall: 1_800_000_000 - 2 * Self.hour))
        await fresh.refresher.start()
        #expect(fresh.served)
        let shown = try #require(fresh.statusFetchedAt())
        #expect(abs(shown - (fresh.clock.wallNow() - 600)) < 1)
        // The same cache a day later on the boot clock is too old, whatever the wall clock says.
        let old = try Rig(
            directory: directory, clock: ManualClock(boot: 1000 + Self.day, wall: 1_800_000_000 - 2 * Self.hour))
        await old.refresher.start()
        #expect(!old.served)
    }

    @Test("Another boot: a cache is aged by the wall clock")
    func otherBootCacheUsesTheWallClock() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Self.writeCache(in: directory, wall: 1_800_000_000, bootID: "boot-a", boot: 99_000)
        let young = try Rig(
            directory: directory, clock: ManualClock(boot: 20, wall: 1_800_000_000 + Self.hour), bootID: "boot-b")
        await young.refresher.start()
        #expect(young.served)
        let old = try Rig(
            directory: directory, clock: ManualClock(boot: 20, wall: 1_800_000_000 + Self.day), bootID: "boot-b")
        await old.refresher.start()
        #expect(!old.served)
        // A cache of the old format (no boot clock) is aged by the wall clock as well.
        try Self.writeCache(in: directory, wall: 1_800_000_000, bootID: nil, boot: nil)
        let legacy = try Rig(
            directory: directory, clock: ManualClock(boot: 99_500, wall: 1_800_000_000 + Self.hour), bootID: "boot-a")
        await legacy.refresher.start()
        #expect(legacy.served)
    }

    @Test("Booted at 1970: the cache is served for at most CacheMaxAge from the start")
    func bootAt1970ServesProvisionally() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Self.writeCache(in: directory, wall: 1_800_000_000, bootID: "boot-a", boot: 5000)
        let rig = try Rig(directory: directory, clock: ManualClock(boot: 10, wall: 30), bootID: "boot-b") {
            $0.cacheMaxAge = .seconds(2 * 3600)
        }
        rig.fetcher.answer(.failure(.noReply("no network yet")))
        await rig.refresher.start()
        #expect(rig.served)
        await rig.expectServed(forAnother: 2 * Self.hour)
    }

    /// A device booted at 1970 (no real-time clock) with a cache fetched in another boot at wall time
    /// 1,800,000,000 and no network: the cache is served provisionally. A minute later NTP sets the wall clock to
    /// `corrected`, and the refresher looks at its deadlines.
    static func bootAt1970(in directory: TemporaryDirectory, thenSetWallTo corrected: Double) async throws -> Rig {
        try writeCache(in: directory, wall: 1_800_000_000, bootID: "boot-a", boot: 5000)
        let rig = try Rig(directory: directory, clock: ManualClock(boot: 10, wall: 30), bootID: "boot-b")
        rig.fetcher.answer(.failure(.noReply("no network yet")))
        await rig.refresher.start()
        #expect(rig.served)
        rig.clock.advance(by: 60)
        rig.clock.setWall(to: corrected)
        await rig.refresher.wallClockChanged()
        await rig.refresher.tick()
        return rig
    }

    @Test("Booted at 1970, then NTP sets the clock: the cache is judged again and expires when it is too old")
    func bootAt1970ThenCorrectedExpires() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // The real time is 25 h after the fetch: the cache is past CacheMaxAge (24 h).
        let rig = try await Self.bootAt1970(in: directory, thenSetWallTo: 1_800_000_000 + Self.day + Self.hour)
        #expect(!rig.served)
    }

    @Test("Booted at 1970, then NTP sets the clock: a young cache stays, aged from its real fetch time")
    func bootAt1970ThenCorrectedKeepsAYoungCache() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let rig = try await Self.bootAt1970(in: directory, thenSetWallTo: 1_800_000_000 + Self.hour)
        #expect(rig.served)
        let shown = try #require(rig.statusFetchedAt())
        #expect(abs(shown - 1_800_000_000) < 1)
        // It goes CacheMaxAge after its real fetch: 23 h from now, not 24 h from the start.
        rig.clock.advance(by: 23 * Self.hour)
        await rig.refresher.tick()
        #expect(!rig.served)
    }

    @Test("A fetch in this boot is stamped with the boot id and the boot-clock time")
    func cacheKeepsBothClocks() async throws {
        let rig = try Rig(clock: ManualClock(boot: 1234, wall: 1_800_000_000))
        defer { rig.directory.remove() }
        await rig.startAndFetch()
        let cache = try #require(rig.cache)
        #expect(cache["format"]?.integerValue == 2)
        #expect(cache["bootId"]?.stringValue == "boot-a")
        #expect(cache["bootTime"]?.numberValue == 1234)
        #expect(cache["fetchedAt"]?.numberValue == 1_800_000_000)
    }

    // MARK: The loop over the clock

    /// Waits until the loop sleeps for the `count`-th time, and returns that sleep's deadline.
    static func sleep(_ count: Int, of clock: ManualClock) async throws -> Double {
        let began = await clock.slept.wait { clock.deadlines.count >= count && clock.sleeping > 0 }
        try #require(began, "the loop never began sleep \(count)")
        return clock.deadlines[count - 1]
    }

    /// Waits until the fetcher was asked `count` times.
    static func fetches(_ count: Int, of fetcher: ScriptedFetcher) async throws {
        let came = await fetcher.fetched.wait { fetcher.fetches.count >= count }
        try #require(came, "fetch \(count) never came")
    }

    @Test("The loop sleeps until the policy's next wake, at most a minute at a time, and refreshes when it comes")
    func loopSleepsUntilTheNextWake() async throws {
        let rig = try Rig(clock: ManualClock(holdingSleeps: true)) { $0.refreshInterval = .seconds(150) }
        defer { rig.directory.remove() }
        await rig.refresher.start()
        let loop = Task { await rig.refresher.run() }
        defer { loop.cancel() }
        // The session start's request, then a sleep of the minute that bounds every sleep.
        #expect(try await Self.sleep(1, of: rig.clock) == 1060)
        #expect(rig.fetcher.fetches.count == 1)
        rig.clock.advance(by: 60)
        #expect(try await Self.sleep(2, of: rig.clock) == 1120)
        rig.clock.advance(by: 60)
        // The refresh is due 150 s after the fetch (the jitter of 0.5 is the middle of its range): this sleep ends
        // there, not a minute on.
        let due = try #require(rig.refresher.status.withLock { $0.nextRefreshAt })
        #expect(try await Self.sleep(3, of: rig.clock) == due)
        #expect(rig.fetcher.fetches.count == 1)
        rig.clock.advance(by: due - rig.clock.bootNow() - 1)
        #expect(rig.fetcher.fetches.count == 1)
        rig.clock.advance(by: 1)
        try await Self.fetches(2, of: rig.fetcher)
    }

    @Test("setUserId ends the loop's sleep at once: the new user's request goes without the clock moving")
    func userChangeEndsTheSleep() async throws {
        let rig = try Rig(clock: ManualClock(holdingSleeps: true))
        defer { rig.directory.remove() }
        await rig.refresher.start()
        let loop = Task { await rig.refresher.run() }
        defer { loop.cancel() }
        _ = try await Self.sleep(1, of: rig.clock)
        let before = rig.clock.bootNow()
        _ = await rig.refresher.setUserId("user-2")
        // The first sleep (a minute) ended without the clock moving: the loop looked at the policy and now sleeps
        // until the new user's request may go (a second after the previous request, for requests callers prompt).
        let deadline = try await Self.sleep(2, of: rig.clock)
        #expect(rig.clock.bootNow() == before)
        #expect(deadline < before + 60)
        rig.clock.advance(by: deadline - before)
        try await Self.fetches(2, of: rig.fetcher)
        #expect(rig.fetcher.fetches == ["hwid-1", "user-2"])
    }

    @Test(
        "A user change between a request's start and its first step supersedes it: nothing sent from it, no failure counted, and the loop sends the new user's request"
    )
    func userChangeBeforeTheRequestRuns() async throws {
        let rig = try Rig(clock: ManualClock(holdingSleeps: true))
        defer { rig.directory.remove() }
        rig.fetcher.failWhenCancelled()
        await rig.refresher.start()
        let result = await rig.refresher.startThenChangeUser(to: "user-2")
        guard case .superseded = result else {
            Issue.record("the first request ended as \(result)")
            return
        }
        // It used to take the new user and generation at its first step and send from the cancelled task: the
        // send failed (cancelled) and counted as a failure, so the new user's flags waited for the backoff.
        #expect(rig.fetcher.fetches.isEmpty)
        #expect(await rig.refresher.policy.failures == 0)
        let loop = Task { await rig.refresher.run() }
        defer { loop.cancel() }
        try await Self.fetches(1, of: rig.fetcher)
        #expect(rig.fetcher.fetches == ["user-2"])
        #expect(await rig.refresher.policy.failures == 0)
    }

    @Test("Cancelling run() ends it while it sleeps, and leaves no sleep behind")
    func cancellationEndsRun() async throws {
        let rig = try Rig(clock: ManualClock(holdingSleeps: true))
        defer { rig.directory.remove() }
        await rig.refresher.start()
        let loop = Task { await rig.refresher.run() }
        _ = try await Self.sleep(1, of: rig.clock)
        loop.cancel()
        await loop.value
        #expect(rig.clock.sleeping == 0)
        #expect(rig.fetcher.fetches.count == 1)
    }
}

extension Refresher {
    /// Starts a request and changes the user in the same actor turn, before the request's task takes its first
    /// step; returns how the request ended.
    fileprivate func startThenChangeUser(to user: String) async -> FetchResult {
        let task = startFetch(automatic: true)
        _ = setUserId(user)
        return await task.value
    }
}
