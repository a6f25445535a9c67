#if canImport(Glibc)
    public import Glibc
#endif

/// A reference to an object kept per thread in a pthread key: each thread sets its own, and the key's destructor
/// releases it when the thread exits.
///
/// For readers that must not touch shared memory on every read (the client library's per-thread flag copies).
public final class ThreadLocalReference<Value: AnyObject>: @unchecked Sendable {
    // @unchecked: the key is immutable; each thread's value is touched only by that thread.
    @usableFromInline let key: pthread_key_t

    public init() {
        var key = pthread_key_t()
        // The destructor gives back the thread's reference when the thread exits.
        pthread_key_create(&key) { raw in
            guard let raw else { return }
            Unmanaged<AnyObject>.fromOpaque(raw).release()
        }
        self.key = key
    }

    /// Deletes the key. References still held for live threads are not released by it; their owner lets go of
    /// what they keep alive.
    deinit {
        pthread_key_delete(key)
    }

    /// The calling thread's reference, unretained (the thread's own reference keeps it alive); nil before `set`.
    @inlinable
    public func current() -> Unmanaged<Value>? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Unmanaged<Value>.fromOpaque(raw)
    }

    /// Makes `value` the calling thread's reference, retained until the thread exits; returns it unretained.
    @discardableResult
    public func set(_ value: Value) -> Unmanaged<Value> {
        let unmanaged = Unmanaged.passRetained(value)
        pthread_setspecific(key, unmanaged.toOpaque())
        return unmanaged
    }
}
