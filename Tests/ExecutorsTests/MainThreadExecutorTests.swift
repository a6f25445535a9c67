import TestSupport
import Testing
import UnixIO

@testable import Executors

/// The main actor's executor, driven by a thread of the test's own in place of the process's main thread.
@Suite("The main thread's executor", .hangLimit)
struct MainThreadExecutorTests {
    /// An actor isolated to `executor`, as the main actor is to the installed one.
    actor Isolated {
        let executor: MainThreadExecutor
        init(executor: MainThreadExecutor) { self.executor = executor }
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        func whereAmI() -> (name: String, isOnExecutor: Bool) {
            (ThreadProbe.currentName, executor.isRunningOnCurrentThread)
        }

        func run(_ body: @Sendable () -> Void) { body() }
    }

    @Test("A test process keeps the platform's executors: only pwflagsd's main.swift installs these")
    func notInstalledHere() {
        #expect(!ProcessExecutors.areInstalled)
    }

    @Test("Its jobs run on the thread in run(), which returns at stop()")
    func jobsRunOnTheRunningThread() async throws {
        let executor = MainThreadExecutor()
        let returned = Countdown()
        #expect(
            DetachedThread.start(name: "xt-main") {
                try? executor.run()
                returned.raise()
            })
        let actor = Isolated(executor: executor)
        for _ in 0..<3 {
            let place = await actor.whereAmI()
            #expect(place.name == "xt-main")
            #expect(place.isOnExecutor)
        }
        #expect(!executor.isRunningOnCurrentThread)
        executor.stop()
        #expect(await returned.reached(1))
    }

    @Test("runUntil returns after the job that makes its condition hold")
    func runUntilCondition() async throws {
        let executor = MainThreadExecutor()
        let returned = Countdown()
        let done = Locked(false)
        #expect(
            DetachedThread.start(name: "xt-until") {
                try? executor.runUntil { done.withLock { $0 } }
                returned.raise()
            })
        let actor = Isolated(executor: executor)
        _ = await actor.whereAmI()
        await actor.run { done.withLock { $0 = true } }
        #expect(await returned.reached(1))
    }
}
