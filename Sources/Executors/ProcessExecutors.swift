import UnixIO

/// Makes a process run its tasks on executors of its own in place of libdispatch's global queues: `WorkerPool`
/// as the default executor and, with Swift 6.3, `MainThreadExecutor` as the main executor. With Swift 6.3 they
/// go in through its `ExecutorFactory`, still behind `@_spi(ExperimentalCustomExecutors)`
/// (`ProcessExecutors+Factory.swift`); with an older Swift the pool goes in through the runtime's enqueue hooks and
/// the main thread drains libdispatch's main queue, the main actor's executor there (`ProcessExecutors+Hooks.swift`).
/// docs/decisions.md says why the daemon does this and how a change shows.
///
/// The executors must be in place before the first job is enqueued: `install` is the first thing a
/// synchronous `main.swift` does, and the process then hands its main thread to `runMainExecutor()`:
///
///     ProcessExecutors.install(name: "pwflagsd")
///     Task { exit(await main()) }
///     ProcessExecutors.runMainExecutor()
///
/// (An `async` top-level `main.swift` cannot: the compiler makes the main task and asks for the main executor
/// before the first line runs. Swift 6.3.1 calls an `ExecutorFactory` itself only for a main module that names one
/// `DefaultExecutorFactory` and is compiled with `-disable-availability-checking`, which this spares the daemon.)
public enum ProcessExecutors {
    /// Installs the main thread's executor and a pool of `maximumWorkers` threads named `NAME-pool` (by default
    /// one a core, from two to four) as the process's executors. Call it once, before any task starts.
    public static func install(name: String, maximumWorkers: Int? = nil) {
        let pool: WorkerPool
        do {
            pool = try WorkerPool(
                name: "\(name)-pool", maximumWorkers: maximumWorkers ?? WorkerPool.defaultWorkerCount, role: poolRole)
        } catch {
            // At the start of the process: descriptors are not short yet, so the kernel has none at all.
            fatalError("\(name): cannot make the executor's timer: \(error)")
        }
        hand(pool: pool)
    }

    /// Whether `install` ran and the runtime hands out its executors.
    public static var areInstalled: Bool {
        runtimeUsesInstalledExecutors
    }

    /// Runs the main actor's jobs on the calling thread, the main thread, for the life of the process.
    public static func runMainExecutor() -> Never {
        do {
            try runMainThread()
        } catch {
            fatalError("the main executor: \(error)")
        }
        fatalError("the main executor stopped")
    }
}
