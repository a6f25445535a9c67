#if canImport(Glibc)
    public import Glibc
#endif

/// A value behind a pthread mutex: the project's one lock type, in place of `Synchronization.Mutex`, with the
/// same `withLock`.
///
/// On Linux `Mutex` locks with atomics and a futex inside the prebuilt Synchronization library, which is not
/// instrumented: ThreadSanitizer sees the accesses made under the lock but not the lock, and reports every pair
/// of them as a race. It intercepts `pthread_mutex_lock` and `pthread_mutex_unlock`, so under this lock it sees
/// the happens-before edge and reports only real races. Uncontended, a pthread mutex costs one atomic exchange
/// each way, as `Mutex` does; the hot reads (the client library's `get`, the daemon's snapshot) take no lock.
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: the value is read and written only between lock and unlock of `mutex`. Both live at stable
    // heap addresses of their own. The value is kept behind a pointer rather than in a stored property: TSan
    // checks a Swift access to a stored property of a class at the object's address, so a zero-sized value
    // (`Locked(())`, a lock that guards a section rather than data) made the lock's own reads of the object look
    // like a race with its holder. Like `Mutex`, it takes and hands out the value as `sending`, so a
    // non-Sendable value cannot stay reachable from outside.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let value: UnsafeMutablePointer<Value>

    public init(_ initialValue: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock; not reentrant.
    @inlinable
    public func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}

extension Locked {
    /// Holds the lock and runs `body` until it returns a value, waiting on `condition` between two runs (with no
    /// timeout: a thread that waits here uses no CPU and is never woken by a clock). `body` learns whether it runs
    /// after a wait, so that it can count its sleepers; it may also run after a spurious wakeup, and must check
    /// the value each time.
    public func wait<Result>(
        on condition: LockCondition, until body: (inout Value, _ afterWait: Bool) -> Result?
    ) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var afterWait = false
        while true {
            // Each run is an access of its own: the value may change while the lock is released in the wait.
            if let result = body(&value.pointee, afterWait) { return result }
            pthread_cond_wait(condition.condition, mutex)
            afterWait = true
        }
    }
}

/// A pthread condition variable for threads that wait on a `Locked` value to change (`Locked.wait(on:until:)`),
/// at a stable heap address of its own, as `Locked`'s mutex is.
public final class LockCondition: @unchecked Sendable {
    // @unchecked: pthread's condition variable is made for use from any thread.
    let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
    }

    /// Wakes one thread waiting on it, if any; called with the lock held or not.
    public func signal() {
        pthread_cond_signal(condition)
    }

    /// Wakes every thread waiting on it.
    public func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
