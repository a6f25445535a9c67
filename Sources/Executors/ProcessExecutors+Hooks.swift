#if !compiler(>=6.3)
    import CLinux
    import UnixIO

    /// The way in before Swift 6.3, whose runtime has no `ExecutorFactory`: the runtime's enqueue hooks hand the pool
    /// every job for the default executor (tasks, default actors, and the sleeps of both), and the main thread drains
    /// libdispatch's main queue (`MainQueueDrain`). The main actor's executor is that queue in these runtimes
    /// (`swift_task_getMainExecutor`, which no hook replaces), and a job for it goes there straight from the actor
    /// runtime, past `swift_task_enqueueMainExecutor_hook`: the main thread drains the queue rather than hooking it.
    /// Neither starts a thread of libdispatch's nor its workqueue monitor.
    extension ProcessExecutors {
        private static let installed = Locked<WorkerPool?>(nil)

        /// The installed pool, read once through the lock by the first hook called (`hand` stores it before it sets
        /// the hooks) and then without it.
        private static let pool: WorkerPool = {
            guard let pool = installed.withLock({ $0 }) else { fatalError("ProcessExecutors.install() first") }
            return pool
        }()

        // The hooks' types: the job and the runtime's own implementation, after the delay (nanoseconds from now) or
        // the deadline (seconds, nanoseconds, the tolerance's seconds and nanoseconds, and the clock's number).
        private typealias GlobalHook = @convention(thin) (UnsafeMutableRawPointer, UnsafeRawPointer) -> Void
        private typealias DelayHook = @convention(thin) (UInt64, UnsafeMutableRawPointer, UnsafeRawPointer) -> Void
        private typealias DeadlineHook =
            @convention(thin) (Int64, Int64, Int64, Int64, Int32, UnsafeMutableRawPointer, UnsafeRawPointer) -> Void

        private static var globalHook: UnsafeMutableRawPointer {
            let hook: GlobalHook = { job, _ in
                ProcessExecutors.pool.enqueueNow(unsafeBitCast(job, to: UnownedJob.self))
            }
            return unsafeBitCast(hook, to: UnsafeMutableRawPointer.self)
        }

        private static var delayHook: UnsafeMutableRawPointer {
            let hook: DelayHook = { delay, job, _ in
                ProcessExecutors.pool.enqueue(
                    unsafeBitCast(job, to: UnownedJob.self), at: Deadline(nanosecondsFromNow: delay))
            }
            return unsafeBitCast(hook, to: UnsafeMutableRawPointer.self)
        }

        /// The tolerance is not used, as with Swift 6.3 (`WorkerPool+Scheduling.swift`).
        private static var deadlineHook: UnsafeMutableRawPointer {
            let hook: DeadlineHook = { seconds, nanoseconds, _, _, clock, job, _ in
                guard let deadline = Deadline(seconds: seconds, nanoseconds: nanoseconds, runtimeClock: clock) else {
                    fatalError("WorkerPool cannot schedule on the runtime's clock \(clock)")
                }
                ProcessExecutors.pool.enqueue(unsafeBitCast(job, to: UnownedJob.self), at: deadline)
            }
            return unsafeBitCast(hook, to: UnsafeMutableRawPointer.self)
        }

        /// The pool runs the global executor's jobs.
        static let poolRole = WorkerPool.Role.globalExecutor

        static func hand(pool: WorkerPool) {
            installed.withLock { installed in
                precondition(installed == nil, "ProcessExecutors.install() twice")
                installed = pool
            }
            swift_task_enqueueGlobal_hook = globalHook
            swift_task_enqueueGlobalWithDelay_hook = delayHook
            swift_task_enqueueGlobalWithDeadline_hook = deadlineHook
        }

        /// The three hooks are the pool's.
        static var runtimeUsesInstalledExecutors: Bool {
            installed.withLock { $0 != nil } && swift_task_enqueueGlobal_hook == globalHook
                && swift_task_enqueueGlobalWithDelay_hook == delayHook
                && swift_task_enqueueGlobalWithDeadline_hook == deadlineHook
        }

        static func runMainThread() throws {
            MainQueueDrain.run()
        }
    }
#endif
