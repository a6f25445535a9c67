import Foundation
import TestSupport
import Testing
import UnixIO

@testable import Executors

/// The daemon's task executor, driven the way the runtime drives it: tasks that prefer it (`executorPreference`)
/// have their jobs and their sleeps enqueued on it. Every pool here is the test's own and is shut down at its
/// end; the test process keeps the platform's executors.
@Suite("The worker pool", .hangLimit)
struct WorkerPoolTests {
    @Test("Tasks run on the pool's own threads, which start as work arrives")
    func tasksRunOnThePoolsThreads() async throws {
        let pool = try WorkerPool(name: "xt-run", maximumWorkers: 2)
        defer { pool.shutDown() }
        #expect(pool.counts.workers == 0)
        let ran = Countdown()
        let names = Locked([String]())
        for _ in 0..<3 {
            Task(executorPreference: pool) {
                names.withLock { $0.append(ThreadProbe.currentName) }
                ran.raise()
            }
        }
        #expect(await ran.reached(3))
        #expect(names.withLock { $0 } == ["xt-run", "xt-run", "xt-run"])
        #expect((1...2).contains(pool.counts.workers))
    }

    #if compiler(>=6.3)
        // Swift 6.3 hands a task's sleep to the executor it prefers (`WorkerPool+Scheduling.swift`); before
        // 6.3 a sleep goes to the global executor, the pool only behind the runtime's hooks (the next test).
        @Test("Sleeps end in deadline order, on either clock, never before their deadline")
        func sleepsEndInDeadlineOrder() async throws {
            // One worker: the jobs whose time came run one by one, in the order the timer hands them over.
            let pool = try WorkerPool(name: "xt-order", maximumWorkers: 1)
            defer { pool.shutDown() }
            let woke = Countdown()
            let order = Locked([Int]())
            let early = Locked([Int]())
            // Far enough ahead that every task is asleep before the first deadline, even on a loaded machine.
            let start = ContinuousClock.now + .milliseconds(500)
            let startSuspending = SuspendingClock.now + .milliseconds(500)
            // Deadlines 0, 100, ... 400 ms after `start`, handed out of order; odd ones on the suspending clock.
            for index in [3, 0, 4, 2, 1] {
                let offset = Duration.milliseconds(100 * index)
                Task(executorPreference: pool) {
                    if index.isMultiple(of: 2) {
                        try? await Task.sleep(until: start + offset, clock: .continuous)
                        if ContinuousClock.now < start + offset { early.withLock { $0.append(index) } }
                    } else {
                        try? await Task.sleep(until: startSuspending + offset, clock: .suspending)
                        if SuspendingClock.now < startSuspending + offset { early.withLock { $0.append(index) } }
                    }
                    order.withLock { $0.append(index) }
                    woke.raise()
                }
            }
            #expect(await woke.reached(5))
            #expect(order.withLock { $0 } == [0, 1, 2, 3, 4])
            #expect(early.withLock { $0 }.isEmpty)
        }
    #endif

    @Test(
        "Jobs scheduled at the deadlines the runtime's hooks pass run in deadline order, never early",
        arguments: [WorkerPool.Role.taskExecutor, .globalExecutor])
    func scheduledJobsRunInDeadlineOrder(role: WorkerPool.Role) async throws {
        // One worker: the jobs whose time came run one by one, in the order the timer hands them over.
        let pool = try WorkerPool(name: "xt-deadline", maximumWorkers: 1, role: role)
        defer { pool.shutDown() }
        let ran = Countdown()
        let order = Locked([Int]())
        let early = Locked([Int]())
        // Far enough ahead that every job is scheduled before the first deadline, even on a loaded machine.
        let boot = Deadline.Clock.boot.now + 500_000_000
        let monotonic = Deadline.Clock.monotonic.now + 500_000_000
        // Deadlines 0, 100, ... 400 ms after the start, handed out of order: even ones as the deadline hook passes
        // the continuous clock (1), odd ones the suspending clock (2); then one 1 s from now, as the delay hook does.
        for index in [3, 0, 4, 2, 1] {
            let time = (index.isMultiple(of: 2) ? boot : monotonic) + Int64(index) * 100_000_000
            let deadline = try #require(
                Deadline(
                    seconds: time / 1_000_000_000, nanoseconds: time % 1_000_000_000,
                    runtimeClock: index.isMultiple(of: 2) ? 1 : 2))
            Task(executorPreference: Scheduler(pool, at: deadline)) {
                if !deadline.hasPassed { early.withLock { $0.append(index) } }
                order.withLock { $0.append(index) }
                ran.raise()
            }
        }
        let delay = Deadline(nanosecondsFromNow: 1_000_000_000)
        Task(executorPreference: Scheduler(pool, at: delay)) {
            if !delay.hasPassed { early.withLock { $0.append(5) } }
            order.withLock { $0.append(5) }
            ran.raise()
        }
        #expect(await ran.reached(6))
        #expect(order.withLock { $0 } == [0, 1, 2, 3, 4, 5])
        #expect(early.withLock { $0 }.isEmpty)
        #expect(pool.counts.scheduled == 0)
    }

    /// An executor that schedules every job it is given on `pool` for `deadline`, as the runtime's deadline and
    /// delay hooks do with a sleep's job: a task that prefers it starts on the pool at that time.
    final class Scheduler: TaskExecutor {
        let pool: WorkerPool
        let deadline: Deadline
        init(_ pool: WorkerPool, at deadline: Deadline) {
            self.pool = pool
            self.deadline = deadline
        }

        func enqueue(_ job: consuming ExecutorJob) {
            pool.enqueue(UnownedJob(job), at: deadline)
        }
    }

    @Test("An idle pool's threads sleep: no CPU time and no context switch while there is nothing to do")
    func idlePoolSleeps() async throws {
        let pool = try WorkerPool(name: "xt-idle", maximumWorkers: 2)
        defer { pool.shutDown() }
        // Both workers started and known by id: two tasks that wait for each other (which also arms the timer,
        // with a sleep that ends before the check).
        let arrived = Countdown()
        let threads = Locked(Set<Int32>())
        for _ in 0..<2 {
            Task(executorPreference: pool) {
                threads.withLock { _ = $0.insert(ThreadProbe.currentID) }
                arrived.raise()
                _ = arrived.blockingWait(for: 2)
                try? await Task.sleep(for: .milliseconds(10))
                arrived.raise()
            }
        }
        #expect(await arrived.reached(4))
        let ids = threads.withLock { $0 }
        #expect(ids.count == 2)
        // Idle: one worker on the timer, the other on the condition variable, both blocked in the kernel.
        let idle = await Eventually.wait {
            pool.counts.idle == 2 && ids.allSatisfy { ThreadProbe.Activity(thread: $0)?.state == "S" }
        }
        #expect(idle, "\(pool.counts), \(ids.map { ThreadProbe.Activity(thread: $0).map(String.init) ?? "gone" })")
        let before = ids.map { ThreadProbe.Activity(thread: $0) }
        // A measurement window, not a wait for anything: a thread that polled or spun would move in it.
        try await Task.sleep(for: .milliseconds(300))
        let after = ids.map { ThreadProbe.Activity(thread: $0) }
        #expect(before == after, "before \(before), after \(after)")
        #expect(pool.counts.scheduled == 0)
    }

    #if compiler(>=6.3)
        @Test("Cancelling a task asleep on the pool's timer resumes it at once")
        func cancellingASleepResumesItPromptly() async throws {
            let pool = try WorkerPool(name: "xt-cancel", maximumWorkers: 2)
            defer { pool.shutDown() }
            let asleep = Countdown()
            let ended = Countdown()
            let outcome = Locked("")
            let task = Task(executorPreference: pool) {
                asleep.raise()
                do {
                    try await Task.sleep(for: .seconds(3600))
                    outcome.withLock { $0 = "slept" }
                } catch {
                    outcome.withLock { $0 = "cancelled on \(ThreadProbe.currentName)" }
                }
                ended.raise()
            }
            #expect(await asleep.reached(1))
            // The sleep is in the pool's heap: the cancellation below wakes a task the timer holds.
            #expect(await Eventually.wait { pool.counts.scheduled == 1 })
            let cancelledAt = ContinuousClock.now
            task.cancel()
            #expect(await ended.reached(1, within: .seconds(5)))
            #expect(ContinuousClock.now - cancelledAt < .seconds(1))
            #expect(outcome.withLock { $0 } == "cancelled on xt-cancel")
        }
    #endif

    @Test("Tasks started together run side by side on every worker, and a thousand more all run")
    func manyTasksRunConcurrently() async throws {
        let pool = try WorkerPool(name: "xt-many", maximumWorkers: 4)
        defer { pool.shutDown() }
        // Four tasks that each hold their thread until all four have arrived: only four threads at once let
        // them through.
        let arrived = Countdown()
        let released = Countdown()
        let threads = Locked(Set<Int32>())
        for _ in 0..<4 {
            Task(executorPreference: pool) {
                threads.withLock { _ = $0.insert(ThreadProbe.currentID) }
                arrived.raise()
                if arrived.blockingWait(for: 4) { released.raise() }
            }
        }
        #expect(await released.reached(4))
        #expect(threads.withLock { $0.count } == 4)
        #expect(pool.counts.workers == 4)
        let ran = Countdown()
        for _ in 0..<1000 {
            Task(executorPreference: pool) { ran.raise() }
        }
        #expect(await ran.reached(1000))
        #expect(pool.counts.workers == 4)
    }

    @Test("A job a task enqueues runs after it on the same worker; no other thread wakes for it")
    func followUpsStayOnTheirWorker() async throws {
        let pool = try WorkerPool(name: "xt-chain", maximumWorkers: 4)
        defer { pool.shutDown() }
        let done = Countdown()
        let threads = Locked(Set<Int32>())
        Task(executorPreference: pool) {
            threads.withLock { _ = $0.insert(ThreadProbe.currentID) }
            // A chain of child tasks, each started by the one before: all of them jobs a worker enqueued.
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask(executorPreference: pool) {
                        threads.withLock { _ = $0.insert(ThreadProbe.currentID) }
                    }
                }
            }
            done.raise()
        }
        #expect(await done.reached(1))
        #expect(threads.withLock { $0.count } == 1)
        #expect(pool.counts.workers == 1)
    }
}
