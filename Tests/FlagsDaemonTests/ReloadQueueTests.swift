import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// Reloads run one at a time, and each caller gets the outcome of a reload that began after it asked.
@Suite(.hangLimit) struct ReloadQueueTests {
    /// What the reloads did: how many ran, and the most that ever ran at once.
    final class Runs: Sendable {
        struct Counts {
            var started = 0
            var running = 0
            var mostAtOnce = 0
        }

        let counts = Locked(Counts())

        /// Marks a reload as begun and returns its number (1 for the first).
        func begin() -> Int {
            counts.withLock { counts in
                counts.started += 1
                counts.running += 1
                counts.mostAtOnce = max(counts.mostAtOnce, counts.running)
                return counts.started
            }
        }

        func end() {
            counts.withLock { $0.running -= 1 }
        }
    }

    /// Waits until `count` callers wait on the queue.
    static func waitForWaiting(_ queue: ReloadQueue<Int>, count: Int) async {
        while await queue.waiters.count < count, !Task.isCancelled { await Task.yield() }
    }

    @Test("Callers that arrive during a reload wait, then share one reload that began after them")
    func laterCallersShareTheNextReload() async {
        let queue = ReloadQueue<Int>()
        let runs = Runs()
        let (release, releaser) = AsyncStream<Void>.makeStream()
        let reload: @Sendable () async -> Int = {
            let number = runs.begin()
            if number == 1 {
                // The first reload is held until the other callers are queued.
                for await _ in release { break }
            }
            runs.end()
            return number
        }
        async let first = queue.run(reload)
        while runs.counts.withLock({ $0.started }) < 1, !Task.isCancelled { await Task.yield() }
        async let second = queue.run(reload)
        async let third = queue.run(reload)
        await Self.waitForWaiting(queue, count: 2)
        releaser.yield()
        let outcomes = await [first, second, third]
        // The running reload read the files before the two others asked: they get the next one's outcome.
        #expect(outcomes == [1, 2, 2])
        let counts = runs.counts.withLock { $0 }
        #expect(counts.started == 2)
        #expect(counts.mostAtOnce == 1)
    }

    @Test("A caller alone runs its own reload at once")
    func aloneRunsAtOnce() async {
        let queue = ReloadQueue<Int>()
        let runs = Runs()
        let reload: @Sendable () async -> Int = {
            let number = runs.begin()
            runs.end()
            return number
        }
        #expect(await queue.run(reload) == 1)
        #expect(await queue.run(reload) == 2)
        #expect(await queue.waiters.isEmpty)
    }
}
