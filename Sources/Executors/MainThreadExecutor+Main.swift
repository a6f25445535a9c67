#if compiler(>=6.3)
    @_spi(ExperimentalCustomExecutors) import _Concurrency

    /// Swift 6.3's main executor: the runtime enqueues the main actor's jobs on it, and `run()`, `runUntil(_:)` and
    /// `stop()` are its run loop.
    extension MainThreadExecutor: MainExecutor {}
#endif
