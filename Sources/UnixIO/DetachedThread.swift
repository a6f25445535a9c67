import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// A detached pthread running one closure, named for `ps` and the journal: what Foundation's `Thread` gave,
/// without linking Foundation.
public enum DetachedThread {
    private final class Job {
        let name: String
        let body: @Sendable () -> Void

        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts `body` on a new detached thread named `name` (the kernel keeps the first 15 bytes); false when
    /// no thread could be made.
    @discardableResult
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        let job = Unmanaged.passRetained(Job(name: name, body: body))
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                let job = Unmanaged<Job>.fromOpaque(raw).takeRetainedValue()
                _ = pwflagsd_prctl_set_thread_name(job.name)
                job.body()
                return nil
            }, job.toOpaque())
        guard started == 0 else {
            job.release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}
