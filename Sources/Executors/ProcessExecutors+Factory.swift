#if compiler(>=6.3)
    import UnixIO
    @_spi(ExperimentalCustomExecutors) import _Concurrency

    /// Swift 6.3's way in: an `ExecutorFactory` that hands the runtime the main thread's executor and the pool.
    extension ProcessExecutors {
        private static let installed = Locked<(main: MainThreadExecutor, pool: WorkerPool)?>(nil)

        private struct Factory: ExecutorFactory {
            static var mainExecutor: any MainExecutor { ProcessExecutors.executors.main }
            static var defaultExecutor: any TaskExecutor { ProcessExecutors.executors.pool }
        }

        private static var executors: (main: MainThreadExecutor, pool: WorkerPool) {
            guard let installed = installed.withLock({ $0 }) else { fatalError("ProcessExecutors.install() first") }
            return installed
        }

        /// The pool is the default executor, a task executor.
        static let poolRole = WorkerPool.Role.taskExecutor

        static func hand(pool: WorkerPool) {
            installed.withLock { installed in
                precondition(installed == nil, "ProcessExecutors.install() twice")
                installed = (MainThreadExecutor(), pool)
            }
            _createExecutors(factory: Factory.self)
        }

        /// The main actor's executor and the default executor are the ones installed.
        static var runtimeUsesInstalledExecutors: Bool {
            guard let installed = installed.withLock({ $0 }) else { return false }
            return MainActor.executor === installed.main && Task.defaultExecutor === installed.pool
        }

        static func runMainThread() throws {
            try executors.main.run()
        }
    }
#endif
