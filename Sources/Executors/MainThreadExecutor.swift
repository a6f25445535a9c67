#if canImport(Glibc)
    import Glibc
#endif

/// The main actor's executor: a queue of jobs that the thread calling `run()` (the process's main thread) takes
/// one by one, waiting on a condition variable without a timeout when there is none.
///
/// libdispatch's main queue, the platform's main executor, cannot stay: after `dispatch_main()` the main queue's
/// jobs run on libdispatch's worker threads, which start its workqueue monitor. Jobs it schedules with a
/// deadline are not its own: a sleeping main-actor task waits on the default executor's timer
/// (`Task.sleep` falls back to the default executor when the current one cannot schedule).
///
/// Swift 6.3's runtime takes it as the main executor (`MainExecutor`, `MainThreadExecutor+Main.swift`). Before
/// 6.3 the main actor's executor is libdispatch's main queue, which no hook replaces, and the main thread drains
/// that queue instead (`MainQueueDrain`).
final class MainThreadExecutor: SerialExecutor, @unchecked Sendable {
    // @unchecked: everything mutable is in `monitor`'s state.
    private let monitor = Monitor(State())

    private struct State {
        var ready = JobQueue<UnownedJob>()
        /// The thread in `run()`, while one is.
        var runner: pthread_t?
        var stopRequested = false
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        monitor.withLock { $0.ready.append(job) }
        // After the lock is released, so that the main thread does not wake only to wait for it.
        monitor.signal()
    }

    /// Runs jobs on the calling thread until `stop()`.
    func run() throws {
        try runUntil { false }
    }

    /// Runs jobs on the calling thread until `condition` holds (checked before each job) or `stop()` is called.
    func runUntil(_ condition: () -> Bool) throws {
        monitor.withLock { state in
            precondition(state.runner == nil, "MainThreadExecutor.run() is already running on another thread")
            state.runner = pthread_self()
        }
        defer { monitor.withLock { $0.runner = nil } }
        let executor = asUnownedSerialExecutor()
        while !condition() {
            let next = monitor.wait { state, _ -> UnownedJob?? in
                if state.stopRequested {
                    state.stopRequested = false
                    return .some(nil)
                }
                return state.ready.popFirst().map { .some($0) }
            }
            guard let job = next else { return }
            job.runSynchronously(on: executor)
        }
    }

    /// Makes `run()` return once the job it runs, if any, returns.
    func stop() {
        monitor.withLock { $0.stopRequested = true }
        monitor.signal()
    }

    /// Whether the calling thread is the one in `run()`.
    var isRunningOnCurrentThread: Bool {
        monitor.withLock { state in state.runner.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// The runtime asks when it cannot tell from the current job (`MainActor.assumeIsolated` called from code
    /// that is not a task, such as a C callback on the main thread).
    func checkIsolated() {
        precondition(isRunningOnCurrentThread, "not on the main executor's thread")
    }

    func isIsolatingCurrentContext() -> Bool? {
        isRunningOnCurrentThread
    }
}
