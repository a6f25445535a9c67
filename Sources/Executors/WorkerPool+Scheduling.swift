#if compiler(>=6.3)
    @_spi(ExperimentalScheduling) import _Concurrency

    /// The pool's scheduling entry points for Swift 6.3's runtime, which calls them for `Task.sleep` and
    /// `Clock.sleep` of tasks on the pool (and, the pool being the default executor, of every task).
    extension WorkerPool: SchedulingExecutor {
        func enqueue<C: Clock>(
            _ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C
        ) {
            enqueue(job, at: clock.now.advanced(by: delay), tolerance: tolerance, clock: clock)
        }

        /// Schedules `job` for `instant`. The tolerance is not used: a job runs as soon after its deadline as a
        /// worker is free, and the timer is armed only for the earliest deadline anyway.
        func enqueue<C: Clock>(
            _ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C
        ) {
            guard let deadline = Deadline(instant, of: clock) else {
                fatalError("WorkerPool cannot schedule on \(C.self): its durations are not Swift.Duration")
            }
            enqueue(UnownedJob(job), at: deadline)
        }
    }
#endif
