import UnixIO

/// A state behind the project's lock (`Locked`), with one condition variable to wait on for it to change: the
/// executors' lock. Both are pthread's, which ThreadSanitizer sees.
final class Monitor<State>: Sendable {
    private let locked: Locked<State>
    private let condition = LockCondition()

    init(_ initialState: consuming sending State) {
        locked = Locked(initialState)
    }

    /// Runs `body` with the state while holding the lock; not reentrant.
    func withLock<Result>(_ body: (inout State) -> Result) -> Result {
        locked.wait(on: condition) { state, _ in Optional(body(&state)) }
    }

    /// Holds the lock and runs `body` until it returns a value, waiting for a `signal()` or `broadcast()`
    /// between two runs (with no timeout: a thread that waits here uses no CPU and is never woken by a clock).
    /// `body` learns whether it runs after a wait, so that it can count its sleepers; it may also run after a
    /// spurious wakeup, and must check the state each time.
    func wait<Result>(until body: (inout State, _ afterWait: Bool) -> Result?) -> Result {
        locked.wait(on: condition, until: body)
    }

    /// Wakes one thread waiting in `wait(until:)`, if any; called with the lock held or not.
    func signal() {
        condition.signal()
    }

    /// Wakes every thread waiting in `wait(until:)`.
    func broadcast() {
        condition.broadcast()
    }
}
