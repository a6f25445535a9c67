import UnixIO

/// Holds the source stack requests go to, and makes control calls wait while a reload swaps it.
///
/// Reads of the store and `status` never wait: they take `current`, the old stack until the new one is ready.
/// Control calls take `active()`, which waits during a swap, so that none reaches a stack that is being retired.
final class StackGate: Sendable {
    private struct State {
        var stack: ProviderStack
        var swapping = false
        var waiters: [CheckedContinuation<ProviderStack, Never>] = []
    }

    private let state: Locked<State>

    init(_ stack: ProviderStack) {
        state = Locked(State(stack: stack))
    }

    /// The stack in effect, without waiting.
    var current: ProviderStack { state.withLock { $0.stack } }

    /// The stack in effect, or the next one when a swap is running.
    func active() async -> ProviderStack {
        if let stack = state.withLock({ $0.swapping ? nil : $0.stack }) { return stack }
        return await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> ProviderStack? in
                guard state.swapping else { return state.stack }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Starts a swap: control calls wait from now on.
    func close() {
        state.withLock { $0.swapping = true }
    }

    /// Ends a swap with `stack` in effect, and lets the waiting calls go to it.
    func open(with stack: ProviderStack) {
        let waiters = state.withLock { state in
            state.stack = stack
            state.swapping = false
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: stack) }
    }
}
