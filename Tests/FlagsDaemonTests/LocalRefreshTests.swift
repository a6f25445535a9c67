import FlagsCore
import FlagsProtocol
import PushwooshAPI
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// `refresh` on the local file: every caller gets a read that started after it asked, and callers who ask while
/// a read runs share the next one instead of each reading and holding a parsed copy of the file.
@Suite(.hangLimit) struct LocalRefreshTests {
    /// The local file, whose second read (the first after the start's) holds its answer until the test lets it go;
    /// it counts its reads.
    final class HeldFile: FlagProvider {
        let inner: LocalFileProvider
        let reads = Locked(0)
        let release: AsyncStream<Void>
        let releaser: AsyncStream<Void>.Continuation

        init(_ inner: LocalFileProvider) {
            self.inner = inner
            (release, releaser) = AsyncStream<Void>.makeStream()
        }

        var mark: FlagSource { inner.mark }
        var upkeep: SourceUpkeep { inner.upkeep }

        /// Reads the file, then (the second read only) waits for the test before it answers.
        func fetch(userId: String) async -> Result<FeatureFlagsResponse, PushwooshError> {
            let result = await inner.fetch(userId: userId)
            let read = reads.withLock { reads in
                reads += 1
                return reads
            }
            if read == 2 { for await _ in release { break } }
            return result
        }

        func fill(_ status: inout StatusResult, refresher: RefresherStatus) {
            inner.fill(&status, refresher: refresher)
        }
        func ageSeconds(refresher: RefresherStatus, clock: any DaemonClock) -> Double? {
            inner.ageSeconds(refresher: refresher, clock: clock)
        }
        func statusLine(flags: Int, refresher: RefresherStatus, clock: any DaemonClock) -> String {
            inner.statusLine(flags: flags, refresher: refresher, clock: clock)
        }
    }

    @Test func callersWhoAskDuringAReadShareTheNextWhichSeesWhatTheyWrote() async throws {
        let rig = try LocalStackRig()
        defer { rig.remove() }
        let file = FlagsFile(path: rig.directory.file("flags.json"), logger: rig.logger)
        let held = HeldFile(LocalFileProvider(file: file))
        let refresher = Refresher(
            provider: held, store: rig.store, stateDirectory: rig.state, configuration: rig.configuration,
            hwid: "hwid-1", logger: rig.logger)
        await refresher.start()
        #expect(rig.servedKeys == ["a", "b"], "the start did not serve the file")
        async let first = refresher.refresh()
        #expect(await Eventually.wait { held.reads.withLock { $0 } == 2 }, "the first caller's read never ran")
        // An edit after the first read began, then callers who ask while it is still running.
        try rig.directory.write("flags.json", FlagServiceTests.other)
        let callers = 50
        let later = Task {
            await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<callers { group.addTask { (try? await refresher.refresh().get()) != nil } }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while await refresher.readWaiters.count < callers, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(await refresher.readWaiters.count == callers, "the callers did not all wait for the running read")
        #expect(rig.servedKeys == ["a", "b"], "the store served the edit before a read that started after it")
        held.releaser.yield()
        #expect((try? await first.get()) != nil)
        #expect(await later.value == callers, "a caller's refresh failed")
        // The start's read, one for the first caller, one shared by the fifty, begun after the edit.
        #expect(held.reads.withLock { $0 } == 3)
        #expect(rig.servedKeys == ["c"])
        #expect(await refresher.readRunning == false)
    }

    @Test func aCallerAfterTheReadsEndedReadsAgain() async throws {
        let rig = try LocalStackRig()
        defer { rig.remove() }
        await rig.start()
        let refresher = rig.stacks.current.refresher
        #expect((try? await refresher.refresh().get()) == false)
        try rig.directory.write("flags.json", FlagServiceTests.other)
        #expect((try? await refresher.refresh().get()) == false)
        #expect(rig.servedKeys == ["c"])
        #expect(await refresher.readRunning == false)
    }
}
