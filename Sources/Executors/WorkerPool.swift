import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A task executor of a few pthreads of its own, for a process that should not wake when it has nothing to do.
///
/// Jobs wait in one first-in-first-out queue; up to `maximumWorkers` threads take them, started one by one as
/// work arrives and kept for the life of the pool. Scheduled jobs (`Task.sleep`, `Clock.sleep`) wait in a heap
/// by deadline, behind one boot-clock timerfd armed at the earliest deadline. An idle worker waits with no
/// timeout: the first on the timer (the *keeper*: when the timer expires it moves the jobs whose time has come to
/// the queue and runs the first itself), the others on a condition variable. With nothing queued and nothing
/// scheduled no thread of the pool wakes at all. Job priorities are not looked at: the daemon's run at one.
///
/// One thread wakes per event. A job a worker enqueues (a continuation it resumes, a task it starts, a job
/// whose time came while it kept the timer) is left for that worker, which takes it when its own job returns;
/// only a job enqueued from elsewhere (the daemon's socket and watcher threads, a libcurl exchange's thread,
/// the main thread) wakes an idle worker, or starts one. So the chain of jobs one event sets off (the refresher's
/// wake: its sleep ends, it looks at the policy, signals a listener, starts its next sleep) runs on the thread
/// that woke for it, and the pool's threads spread only over events that arrive at once. Waking a thread costs
/// a context switch or two, more than most jobs take. The price is that a job's follow-ups wait for it to
/// return, as on Swift's cooperative pool on a one-core machine, where it has one thread: jobs must not block,
/// and must not wait for one another. The daemon's blocking waits (libcurl, a full notification socket) run on
/// threads of their own.
///
/// What it replaces is libdispatch's global queues, Swift concurrency's default on Linux, whose workqueue
/// monitor wakes every second for the life of the process (docs/performance.md, Idle wakeups).
///
/// Jobs come in through two doors, whichever the compiler has: Swift 6.3's `TaskExecutor` and `SchedulingExecutor`
/// entry points (`WorkerPool+Scheduling.swift`), or before 6.3 the runtime's enqueue hooks
/// (`ProcessExecutors+Hooks.swift`). Both end in `enqueueNow(_:)` and `enqueue(_:at:)`.
final class WorkerPool: TaskExecutor, @unchecked Sendable {
    // @unchecked: everything mutable is in `monitor`'s state; `timer` is set at init and is thread-safe.
    /// The name of the pool's threads, for `ps` and `/proc/PID/task/*/comm` (the kernel keeps 15 bytes).
    let threadName: String
    let maximumWorkers: Int
    let role: Role
    private let monitor: Monitor<State>
    private let timer: BootTimer

    private struct State {
        var ready = JobQueue<UnownedJob>()
        var scheduled = DeadlineHeap<UnownedJob>()
        /// Workers started and not ended, and those of them not yet at the queue (each comes for a job).
        var workers = 0
        var starting = 0
        /// Workers waiting on the condition variable, and how many of them were signalled and have not woken yet.
        var sleepers = 0
        var signalled = 0
        /// Whether a worker waits on the timer, and whether it was asked to come back for a queued job (the timer
        /// then armed to expire at once, and left so until the keeper arms it again).
        var keeper = false
        var keeperPoked = false
        /// What the timer is armed at (boot-clock nanoseconds); nil when disarmed or poked.
        var timerArmedAt: Int64?
        /// Set by `shutDown()`: workers end once the queue is empty.
        var shuttingDown = false
    }

    /// How the pool's threads run its jobs.
    enum Role {
        /// As a task executor: Swift 6.3's default executor, and the executor of the tasks that prefer the pool.
        case taskExecutor
        /// As the runtime's own global executor runs them, on no executor in particular: the pool behind the
        /// runtime's hooks before Swift 6.3, whose jobs are the global executor's. (Run on a task executor that
        /// their task does not prefer, a task's every call of a nonisolated async function is an enqueue more.)
        case globalExecutor
    }

    /// A pool of at most `maximumWorkers` threads named `name`. Throws when the kernel gives no timerfd.
    init(name: String, maximumWorkers: Int, role: Role = .taskExecutor) throws(SystemError) {
        precondition(maximumWorkers > 0, "a pool needs a thread")
        threadName = name
        self.maximumWorkers = maximumWorkers
        self.role = role
        monitor = Monitor(State())
        timer = try BootTimer()
    }

    /// How many threads to use on this machine: one a core, at least two (a job that blocks briefly then holds
    /// up at most half the pool) and at most four (the daemon's tasks mostly wait).
    static var defaultWorkerCount: Int {
        min(max(sysconf(Int32(_SC_NPROCESSORS_ONLN)), 2), 4)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        enqueueNow(UnownedJob(job))
    }

    /// Queues `job` to run as soon as a worker is free.
    func enqueueNow(_ job: UnownedJob) {
        let fromWorker = isWorkerThread
        let wakes = monitor.withLock { state in
            state.ready.append(job)
            return wakeWorkers(&state, enqueuedByWorker: fromWorker)
        }
        wake(wakes)
    }

    /// Schedules `job` for `deadline`, or queues it at once when that has passed.
    func enqueue(_ job: UnownedJob, at deadline: Deadline) {
        if deadline.hasPassed {
            enqueueNow(job)
            return
        }
        let starts = monitor.withLock { state -> Int in
            state.scheduled.insert(job, at: deadline)
            armForFirst(&state)
            // The keeper sees the timer's new time. With no keeper a worker runs a job and becomes it when done;
            // with no worker at all, one starts for it.
            guard state.workers == 0 else { return 0 }
            state.workers += 1
            state.starting += 1
            return 1
        }
        startWorkers(starts)
    }

    /// Closes the timer. Only a pool that was shut down gets here: its threads hold it until they end.
    deinit {
        timer.close()
    }

    /// Ends the pool's threads once the queue is empty (tests; the daemon's pool lives as long as the process).
    /// Scheduled jobs never run.
    func shutDown() {
        monitor.withLock { state in
            state.shuttingDown = true
            monitor.broadcast()
            poke(&state)
        }
    }

    /// The pool's counts, for tests.
    var counts: (workers: Int, idle: Int, ready: Int, scheduled: Int) {
        monitor.withLock { ($0.workers, $0.sleepers + ($0.keeper ? 1 : 0), $0.ready.count, $0.scheduled.count) }
    }

    // MARK: Waking

    /// Threads to wake once the lock is released: sleepers to signal and workers to start.
    private struct Wakes {
        var signals = 0
        var starts = 0
    }

    /// Makes sure a thread comes for each queued job, for jobs enqueued from outside the pool: the jobs a worker
    /// enqueued are its own. Counted as coming are the signalled sleepers, a poked keeper, the sleepers and
    /// workers this wakes or starts, and workers started earlier that have not looked at the queue yet. Wakes
    /// sleepers first, then the keeper (which leaves the timer unwatched until a worker
    /// is idle again), then counts workers to start.
    private func wakeWorkers(_ state: inout State, enqueuedByWorker: Bool) -> Wakes {
        var wakes = Wakes()
        guard !enqueuedByWorker else { return wakes }
        let coming = state.signalled + state.starting + (state.keeperPoked ? 1 : 0)
        while state.ready.count > coming + wakes.signals + wakes.starts {
            if state.sleepers > state.signalled + wakes.signals {
                wakes.signals += 1
            } else if state.keeper, !state.keeperPoked {
                poke(&state)
            } else if state.workers < maximumWorkers {
                state.workers += 1
                wakes.starts += 1
            } else {
                break
            }
        }
        state.signalled += wakes.signals
        state.starting += wakes.starts
        return wakes
    }

    private func wake(_ wakes: Wakes) {
        for _ in 0..<wakes.signals { monitor.signal() }
        startWorkers(wakes.starts)
    }

    /// Makes the keeper's wait end now: the timer armed to a time past. Its earliest deadline is armed again when
    /// the keeper wakes.
    private func poke(_ state: inout State) {
        guard state.keeper, !state.keeperPoked else { return }
        state.keeperPoked = true
        state.timerArmedAt = nil
        timer.arm(at: 0)
    }

    /// Arms the timer for the earliest scheduled job, or disarms it; only when that changes, and not while a
    /// poke is pending (it would be lost).
    private func armForFirst(_ state: inout State) {
        guard !state.keeperPoked else { return }
        let wanted = state.scheduled.first?.estimate
        guard wanted != state.timerArmedAt else { return }
        if let wanted { timer.arm(at: wanted) } else { timer.disarm() }
        state.timerArmedAt = wanted
    }

    // MARK: Workers

    /// The pthread key that tells a thread it works for a pool, and for which: the pool, unretained.
    private static let workerKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The runtime's generic executor, "no executor in particular", on which its global executor runs jobs. No
    /// public API names it: it is the executor reference whose identity and implementation are both null.
    private static let genericExecutor = unsafeBitCast((0, 0) as (UInt, UInt), to: UnownedSerialExecutor.self)

    private var isWorkerThread: Bool {
        pthread_getspecific(Self.workerKey) == Unmanaged.passUnretained(self).toOpaque()
    }

    private func startWorkers(_ count: Int) {
        for _ in 0..<count where !DetachedThread.start(name: threadName, { [self] in work() }) {
            // Out of threads (EAGAIN): the others take the job; with none at all nothing ever runs again.
            let none = monitor.withLock { state in
                state.workers -= 1
                state.starting -= 1
                return state.workers == 0
            }
            if none { fatalError("\(threadName): cannot start a worker thread") }
        }
    }

    private enum Next {
        case run(UnownedJob)
        case watchTimer
        case end
    }

    private func work() {
        pthread_setspecific(Self.workerKey, Unmanaged.passUnretained(self).toOpaque())
        monitor.withLock { $0.starting -= 1 }
        let executor = asUnownedTaskExecutor()
        while true {
            switch next() {
            case .run(let job) where role == .taskExecutor:
                job.runSynchronously(on: executor)
            case .run(let job):
                job.runSynchronously(on: Self.genericExecutor)
            case .watchTimer:
                timer.wait()
                timerExpired()
            case .end:
                return
            }
        }
    }

    private func next() -> Next {
        monitor.wait { state, afterWait in
            if afterWait {
                state.sleepers -= 1
                if state.signalled > 0 { state.signalled -= 1 }
            }
            if let job = state.ready.popFirst() { return .run(job) }
            if state.shuttingDown {
                state.workers -= 1
                return .end
            }
            if !state.keeper {
                state.keeper = true
                return .watchTimer
            }
            state.sleepers += 1
            return nil
        }
    }

    /// The keeper's wait ended: the timer expired or it was poked. Moves the jobs whose time has come to the
    /// queue and arms the timer for the next. The keeper runs them itself, one after another (one thread per
    /// event): it wakes nobody.
    private func timerExpired() {
        monitor.withLock { state in
            state.keeper = false
            state.keeperPoked = false
            state.timerArmedAt = nil
            // The timer may have expired for an earlier arming: only what is due now leaves the heap.
            let now = Deadline.Clock.boot.now
            while let first = state.scheduled.first, first.estimate <= now, let entry = state.scheduled.removeFirst() {
                if entry.deadline.hasPassed {
                    state.ready.append(entry.job)
                } else {
                    // A monotonic deadline after a suspension: estimated again, later than now.
                    state.scheduled.reinsert(entry)
                }
            }
            armForFirst(&state)
        }
    }
}
