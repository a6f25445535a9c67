import TestSupport
import Testing
import UnixIO

@testable import Executors

/// The pool's parts that hold jobs, with numbers in place of jobs, and its reading of clocks' instants.
@Suite("The job queue, the deadline heap and deadlines", .hangLimit)
struct QueueTests {
    @Test("The queue gives its jobs back first in first out, across its growth")
    func queueIsFirstInFirstOut() {
        var queue = JobQueue<Int>()
        var next = 0
        var expected = 0
        // Interleaved, so that the ring wraps before it grows.
        for round in 0..<50 {
            for _ in 0..<(round % 7 + 1) {
                queue.append(next)
                next += 1
            }
            for _ in 0..<(round % 5) {
                guard let first = queue.popFirst() else { break }
                #expect(first == expected)
                expected += 1
            }
        }
        while let first = queue.popFirst() {
            #expect(first == expected)
            expected += 1
        }
        #expect(expected == next)
        #expect(queue.isEmpty)
    }

    @Test("The heap gives its entries back by deadline, and equal deadlines in the order they came")
    func heapOrdersByDeadline() {
        var heap = DeadlineHeap<Int>()
        let base = Deadline.Clock.boot.now + 3_600_000_000_000
        // Job n is due at base + (n % 10) seconds: ten of each deadline, inserted in a scrambled order.
        let jobs = (0..<100).map { ($0 * 37) % 100 }
        for job in jobs {
            heap.insert(job, at: Deadline(clock: .boot, nanoseconds: base + Int64(job % 10) * 1_000_000_000))
        }
        var taken: [Int] = []
        while let entry = heap.removeFirst() { taken.append(entry.job) }
        let expected = jobs.enumerated().sorted { a, b in
            (a.element % 10, a.offset) < (b.element % 10, b.offset)
        }.map(\.element)
        #expect(taken == expected)
    }

    @Test("A monotonic deadline is estimated on the boot clock by its distance from now")
    func monotonicDeadlineEstimate() {
        let inOneSecond = Deadline(clock: .monotonic, nanoseconds: Deadline.Clock.monotonic.now + 1_000_000_000)
        let estimate = inOneSecond.bootEstimate - Deadline.Clock.boot.now
        #expect((900_000_000...1_000_000_000).contains(estimate), "\(estimate) ns ahead")
        #expect(!inOneSecond.hasPassed)
        #expect(Deadline(clock: .monotonic, nanoseconds: Deadline.Clock.monotonic.now).hasPassed)
    }

    #if compiler(>=6.3)
        // Swift 6.3's scheduling entry points (`WorkerPool+Scheduling.swift`) hand the pool clocks' instants.
        @Test("Instants of the continuous and suspending clocks are read as the boot and monotonic clocks")
        func standardClocks() throws {
            let continuous = try #require(Deadline(ContinuousClock.now + .seconds(2), of: ContinuousClock()))
            #expect(continuous.clock == .boot)
            #expect((1_900_000_000...2_000_000_000).contains(continuous.nanoseconds - Deadline.Clock.boot.now))
            let suspending = try #require(Deadline(SuspendingClock.now + .seconds(2), of: SuspendingClock()))
            #expect(suspending.clock == .monotonic)
            #expect((1_900_000_000...2_000_000_000).contains(suspending.nanoseconds - Deadline.Clock.monotonic.now))
        }

        @Test("An instant of another clock is counted from that clock's now, on the boot clock")
        func otherClock() throws {
            let clock = OffsetClock()
            let deadline = try #require(Deadline(clock.now.advanced(by: .seconds(3)), of: clock))
            #expect(deadline.clock == .boot)
            #expect((2_900_000_000...3_000_000_000).contains(deadline.nanoseconds - Deadline.Clock.boot.now))
        }
    #endif

    @Test("The deadline hook's clocks 1 and 2 are the boot and monotonic clocks; no other is read")
    func runtimeClocks() throws {
        let bootNow = Deadline.Clock.boot.now
        let continuous = try #require(
            Deadline(seconds: bootNow / 1_000_000_000 + 2, nanoseconds: bootNow % 1_000_000_000, runtimeClock: 1))
        #expect(continuous.clock == .boot)
        #expect((1_900_000_000...2_000_000_000).contains(continuous.nanoseconds - Deadline.Clock.boot.now))
        let monotonicNow = Deadline.Clock.monotonic.now
        let suspending = try #require(
            Deadline(
                seconds: monotonicNow / 1_000_000_000 + 2, nanoseconds: monotonicNow % 1_000_000_000, runtimeClock: 2))
        #expect(suspending.clock == .monotonic)
        #expect((1_900_000_000...2_000_000_000).contains(suspending.nanoseconds - Deadline.Clock.monotonic.now))
        #expect(Deadline(seconds: 1, nanoseconds: 0, runtimeClock: 3) == nil)
        #expect(Deadline(seconds: Int64.max, nanoseconds: 0, runtimeClock: 1)?.nanoseconds == Int64.max)
    }

    @Test("The delay hook's delay is counted from now on the boot clock, saturated")
    func runtimeDelay() {
        let inTwoSeconds = Deadline(nanosecondsFromNow: 2_000_000_000)
        #expect(inTwoSeconds.clock == .boot)
        #expect((1_900_000_000...2_000_000_000).contains(inTwoSeconds.nanoseconds - Deadline.Clock.boot.now))
        #expect(Deadline(nanosecondsFromNow: UInt64.max).nanoseconds == Int64.max)
    }

    @Test("Durations past what 64 bits of nanoseconds hold are saturated")
    func saturatedDurations() {
        #expect(Deadline.nanoseconds(.seconds(Int64.max)) == Int64.max)
        #expect(Deadline.nanoseconds(.seconds(-Int64.max)) == Int64.min)
        #expect(Deadline.nanoseconds(.milliseconds(1500)) == 1_500_000_000)
    }
}

#if compiler(>=6.3)
    /// A clock of the tests' own whose instants mean nothing to the pool: the continuous clock a day ahead.
    struct OffsetClock: Clock {
        struct Instant: InstantProtocol {
            var offset: Duration
            func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
            func duration(to other: Instant) -> Duration { other.offset - offset }
            static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        }

        var now: Instant { Instant(offset: ContinuousClock().systemEpoch.duration(to: .now) + .seconds(86_400)) }
        var minimumResolution: Duration { .nanoseconds(1) }

        func sleep(until deadline: Instant, tolerance: Duration?) async throws {
            try await Task.sleep(for: now.duration(to: deadline))
        }
    }
#endif
