import UnixIO
@_spi(ExperimentalCustomExecutors) import _Concurrency

/// Makes a process run its tasks on executors of its own (`MainThreadExecutor`, `WorkerPool`) in place of
/// libdispatch's, through Swift 6.3's `ExecutorFactory`, which is still behind
/// `@_spi(ExperimentalCustomExecutors)` (docs/decisions.md says why the daemon uses it and how a change shows).
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
    private static let installed = Locked<(main: MainThreadExecutor, pool: WorkerPool)?>(nil)

    private struct Factory: ExecutorFactory {
        static var mainExecutor: any MainExecutor { ProcessExecutors.executors.main }
        static var defaultExecutor: any TaskExecutor { ProcessExecutors.executors.pool }
    }

    private static var executors: (main: MainThreadExecutor, pool: WorkerPool) {
        guard let installed = installed.withLock({ $0 }) else { fatalError("ProcessExecutors.install() first") }
        return installed
    }

    /// Installs the main thread's executor and a pool of `maximumWorkers` threads named `NAME-pool` (by default
    /// one a core, from two to four) as the process's executors. Call it once, before any task starts.
    public static func install(name: String, maximumWorkers: Int? = nil) {
        let pool: WorkerPool
        do {
            pool = try WorkerPool(name: "\(name)-pool", maximumWorkers: maximumWorkers ?? WorkerPool.defaultWorkerCount)
        } catch {
            // At the start of the process: descriptors are not short yet, so the kernel has none at all.
            fatalError("\(name): cannot make the executor's timer: \(error)")
        }
        installed.withLock { installed in
            precondition(installed == nil, "ProcessExecutors.install() twice")
            installed = (MainThreadExecutor(), pool)
        }
        _createExecutors(factory: Factory.self)
    }

    /// Whether `install` ran and the runtime hands out its executors: the main actor's and the default
    /// executor are the ones installed.
    public static var areInstalled: Bool {
        guard let installed = installed.withLock({ $0 }) else { return false }
        return MainActor.executor === installed.main && Task.defaultExecutor === installed.pool
    }

    /// Runs the main actor's jobs on the calling thread, the main thread, for the life of the process.
    public static func runMainExecutor() -> Never {
        do {
            try executors.main.run()
        } catch {
            fatalError("the main executor: \(error)")
        }
        fatalError("the main executor stopped")
    }
}
