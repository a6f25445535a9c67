#if canImport(Glibc)
    import Glibc
#endif

/// A state behind a pthread mutex, with one condition variable to wait on for it to change: the executors'
/// lock. `UnixIO.Locked` has no condition variable; both are pthread's, which ThreadSanitizer sees.
final class Monitor<State>: @unchecked Sendable {
    // @unchecked: the state is read and written only while `mutex` is held. All three live at stable heap
    // addresses of their own, as in `Locked` (which says why the state is behind a pointer).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private let state: UnsafeMutablePointer<State>

    init(_ initialState: consuming sending State) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
        state = .allocate(capacity: 1)
        state.initialize(to: initialState)
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the state while holding the lock; not reentrant.
    func withLock<Result>(_ body: (inout State) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(&state.pointee)
    }

    /// Holds the lock and runs `body` until it returns a value, waiting for a `signal()` or `broadcast()`
    /// between two runs (with no timeout: a thread that waits here uses no CPU and is never woken by a clock).
    /// `body` learns whether it runs after a wait, so that it can count its sleepers; it may also run after a
    /// spurious wakeup, and must check the state each time.
    func wait<Result>(until body: (inout State, _ afterWait: Bool) -> Result?) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var afterWait = false
        while true {
            // Each run is an access of its own: the state may change while the lock is released in the wait.
            if let result = body(&state.pointee, afterWait) { return result }
            pthread_cond_wait(condition, mutex)
            afterWait = true
        }
    }

    /// Wakes one thread waiting in `wait(until:)`, if any; called with the lock held or not.
    func signal() {
        pthread_cond_signal(condition)
    }

    /// Wakes every thread waiting in `wait(until:)`.
    func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
