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
