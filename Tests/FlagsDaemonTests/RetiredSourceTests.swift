import FlagsCore
import Foundation
import PushwooshAPI
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// A source that a reload retired sends nothing and writes nothing, not even for a reply already on its way.
@Suite(.hangLimit) struct RetiredSourceTests {
    static let flag = Flag(key: "a", isEnabled: true, ruleId: "r1")

    /// A Pushwoosh stand-in whose flag replies wait until the test lets them go; it counts what it was asked.
    final class HeldFetcher: FlagFetcher {
        let problem: String? = nil
        let fetches = Locked(0)
        let impressions = Locked(0)
        let release: AsyncStream<Void>
        let releaser: AsyncStream<Void>.Continuation

        init() {
            (release, releaser) = AsyncStream<Void>.makeStream()
        }

        func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError> {
            fetches.withLock { $0 += 1 }
            // Cancellation ends the wait too: the reply then arrives just after the request was cancelled.
            for await _ in release { break }
            return .success(FeatureFlagsResponse(flags: [RetiredSourceTests.flag]))
        }

        func sendImpression(of flag: Flag, userId: String, date: Date) async -> Result<Void, PushwooshError> {
            impressions.withLock { $0 += 1 }
            return .success(())
        }
    }

    static func refresher(_ fetcher: HeldFetcher, store: FlagStore, state: StateDirectory) -> Refresher {
        var configuration = Configuration()
        configuration.applicationCode = "ABCDE-12345"
        return Refresher(
            provider: PushwooshProvider(
                fetcher: fetcher, applicationCode: configuration.applicationCode,
                diskCache: FlagCache(directory: state)),
            store: store, stateDirectory: state, configuration: configuration, hwid: "hwid-1",
            logger: Logger(level: .err))
    }

    @Test("A reply that arrives after the refresher was retired reaches neither the store nor the disk cache")
    func replyInFlightIsDropped() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        let store = FlagStore()
        let fetcher = HeldFetcher()
        let refresher = Self.refresher(fetcher, store: store, state: state)
        await refresher.start()
        async let answer = refresher.refresh()
        while fetcher.fetches.withLock({ $0 }) < 1, !Task.isCancelled { await Task.yield() }
        await refresher.retire()
        fetcher.releaser.yield()
        let result = await answer
        #expect(throws: PushwooshError.self) { try result.get() }
        #expect(store.current.flags.count == 0)
        #expect(state.read(FlagCache.file) == nil)

        // Nothing more is sent, and the user id is not written.
        let again = await refresher.refresh()
        #expect(throws: PushwooshError.self) { try again.get() }
        #expect(fetcher.fetches.withLock { $0 } == 1)
        #expect((try? await refresher.setUserId("bob").get()) == "hwid-1")
        #expect(state.read(Refresher.userIdFile) == nil)
    }

    @Test("A retired impression reporter sends nothing and says so with status 0")
    func retiredReporterSendsNothing() async throws {
        let store = FlagStore()
        store.replace(with: FlagSet([Self.flag]))
        let fetcher = HeldFetcher()
        let reporter = ImpressionReporter(fetcher: fetcher, store: store, logger: Logger(level: .err)) {
            (session: 1, userId: "hwid-1")
        }
        await reporter.retire()
        #expect(await reporter.logImpression(key: "a") == .failed(status: 0))
        #expect(fetcher.impressions.withLock { $0 } == 0)
    }

    @Test("A retired local file source no longer changes the served flags, on a refresh or on its watch's change")
    func retiredLocalSourceWritesNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("flags.json", #"{"flags":[{"key":"a","enabled":true,"rule_id":"r1"}]}"#)
        let store = FlagStore()
        let refresher = Refresher(
            provider: LocalFileProvider(
                file: FlagsFile(path: directory.file("flags.json"), logger: Logger(level: .err))),
            store: store, stateDirectory: StateDirectory(path: directory.path), configuration: Configuration(),
            hwid: "hwid-1", logger: Logger(level: .err))
        await refresher.start()
        #expect(store.current.flags.sorted.map(\.key) == ["a"])
        await refresher.retire()
        try directory.write("flags.json", #"{"flags":[{"key":"b","enabled":true,"rule_id":"r1"}]}"#)
        await #expect(throws: PushwooshError.self) { try await refresher.readItself().get() }
        await #expect(throws: PushwooshError.self) { try await refresher.refresh().get() }
        #expect(store.current.flags.sorted.map(\.key) == ["a"])
    }
}
