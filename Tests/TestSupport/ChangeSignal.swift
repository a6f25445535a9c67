import UnixIO

/// Waits for a condition that an in-process double announces (a clock that began a sleep, a fetcher that was
/// asked): `fire()` wakes every waiter, which looks at its condition again. No polling: a waiter sleeps until the
/// next fire or its deadline, whichever comes first, so a condition that never holds fails the test at the
/// deadline, and one that holds is seen at once.
public final class ChangeSignal: Sendable {
    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var generation = 0
        var nextID = 0
        var waiters: [Waiter] = []
        /// Waiters whose deadline or cancellation came before they were listed: they do not wait at all.
        var resumedEarly: Set<Int> = []
    }

    private let state = Locked(State())

    public init() {}

    /// Something changed: every waiter looks again.
    public func fire() {
        let woken = state.withLock { state -> [Waiter] in
            state.generation += 1
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in woken { waiter.continuation.resume() }
    }

    /// Returns true once `condition` holds, looking at it at the start and after each `fire`; false when
    /// `timeout` passes first or the task is cancelled.
    public func wait(timeout: Duration = .seconds(10), until condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let generation = state.withLock(\.generation)
            if condition() { return true }
            guard ContinuousClock.now < deadline, !Task.isCancelled else { return false }
            await next(after: generation, before: deadline)
        }
    }

    /// Returns at the first fire after `generation`, or at `deadline`.
    private func next(after generation: Int, before deadline: ContinuousClock.Instant) async {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        // The deadline's timer resumes the waiter when no fire did; whichever takes it out of the list resumes it.
        let timer = Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            if !Task.isCancelled { self.resume(id) }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let fired = state.withLock { state -> Bool in
                    if state.resumedEarly.remove(id) != nil { return true }
                    guard state.generation == generation else { return true }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return false
                }
                if fired { continuation.resume() }
            }
        } onCancel: {
            self.resume(id)
        }
        timer.cancel()
        state.withLock { _ = $0.resumedEarly.remove(id) }
    }

    private func resume(_ id: Int) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                state.resumedEarly.insert(id)
                return nil
            }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume()
    }
}
