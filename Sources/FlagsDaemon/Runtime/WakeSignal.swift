import UnixIO

/// Ends a wait early: the refresher's loop waits on it next to its one sleep, and calls that change the policy
/// (a user id, the app state, a reload, the wall clock) signal it.
///
/// A signal given while nobody waits is kept until the next wait, so that one given during a `tick` is not lost.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Locked(State())

    /// Ends the current wait, or the next one.
    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Forgets a signal given before now: the caller is about to look at the policy anyway.
    func clear() {
        state.withLock { $0.pending = false }
    }

    /// Takes a kept signal without waiting: true when one was given since the last wait, take or clear.
    func take() -> Bool {
        state.withLock { state in
            defer { state.pending = false }
            return state.pending
        }
    }

    /// Returns at the next signal (or at once for a kept one), or when the task is cancelled.
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
