#if !compiler(>=6.3)
    import CLinux

    #if canImport(Glibc)
        import Glibc
    #endif

    /// The main thread's run loop before Swift 6.3: it drains libdispatch's main queue, the main actor's executor in
    /// those runtimes, the way CoreFoundation's run loop does, and waits on the queue's eventfd with no timeout between
    /// two batches. `dispatch_main()` cannot take its place: after it, the main queue's jobs run on libdispatch's
    /// worker threads, which start its workqueue monitor (`MainThreadExecutor`).
    enum MainQueueDrain {
        /// Runs the main queue's jobs on the calling thread, the main thread, for good.
        static func run() -> Never {
            var wait = pollfd(fd: _dispatch_get_main_queue_handle_4CF(), events: Int16(POLLIN), revents: 0)
            while true {
                if poll(&wait, 1, -1) < 0 {
                    guard errno == EINTR else { fatalError("the main queue's eventfd: errno \(errno)") }
                    continue
                }
                // Read before the jobs run, so that one queued while they run is not missed: libdispatch writes the
                // eventfd again for it. The eventfd is non-blocking.
                var count: eventfd_t = 0
                _ = eventfd_read(wait.fd, &count)
                _dispatch_main_queue_callback_4CF(nil)
            }
        }
    }
#endif
