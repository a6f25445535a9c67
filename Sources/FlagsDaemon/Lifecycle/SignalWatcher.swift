import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Delivers POSIX signals as an async sequence instead of running code inside a signal handler.
///
/// A plain handler writes the signal number to a pipe (`SignalPipe`), and the `DescriptorWatcher` reads it and
/// yields it.
/// Not a `signalfd` nor a Dispatch signal source: both rely on the signal being blocked in every thread, and a
/// signal that the kernel hands to a thread of the runtime's that does not block it was sometimes lost, so
/// SIGTERM did not stop the daemon (about one start in 30 in the integration tests).
enum SignalWatcher {
    /// Catches `signals` and yields each one as it arrives, until the stream is dropped.
    ///
    /// Throws when the pipe or its watch cannot be made (no descriptor or thread left): the daemon then cannot
    /// be stopped gracefully, so it does not start, rather than start with a shutdown trigger that never fires
    /// or fires at once.
    static func signals(_ signals: [Int32]) throws(SystemError) -> AsyncStream<Int32> {
        guard let watcher = DescriptorWatcher.shared else { throw SystemError("epoll_create1", errno: EMFILE) }
        let pipe = try SignalPipe(catching: signals)
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingNewest(8))
        // The pipe stays open for the process's life: a handler may still run after the stream ends.
        let watch = try watcher.watch(pipe.readDescriptor) {
            for number in pipe.readSignals() { continuation.yield(number) }
        }
        continuation.onTermination = { _ in watch.cancel() }
        return stream
    }
}
