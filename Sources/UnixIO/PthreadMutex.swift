#if canImport(Glibc)
    import Glibc
#endif

/// A plain pthread mutex, for cold state that the thread sanitizer must see locked: it understands pthread
/// mutexes but not the futex behind `Mutex` on Linux. What Foundation's `NSLock` gave, without Foundation.
public final class PthreadMutex: @unchecked Sendable {
    // @unchecked: the mutex itself is the synchronisation; it lives at a stable heap address.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }

    public func unlock() { pthread_mutex_unlock(mutex) }
}
