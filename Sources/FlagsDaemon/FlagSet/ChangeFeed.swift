import UnixIO

/// The one way a change of the flags reaches a listener (the line protocol's, OFREP's): the store's observer
/// puts the update in the feed and rings the loop's doorbell; the listener takes the updates on the loop, in
/// revision order, when it wakes, and works from the snapshot each one carries. No listener reads the store.
final class ChangeFeed: Sendable {
    /// One change, and when the store made it (`EngineClock`), from which its propagation is measured.
    struct Change: Sendable {
        let update: FlagUpdate
        let madeAt: UInt64
    }

    private struct State {
        var changes: [Change] = []
        /// Set when the listener has ended: nothing more is kept for it.
        var closed = false
    }

    private let state = Locked(State())
    /// The snapshot the feed starts from: every later change arrives through `take()`.
    let initial: FlagSnapshot

    /// Observes `store` from now on, ringing `doorbell` at each change.
    init(store: FlagStore, doorbell: Doorbell) {
        let state = self.state
        // Observed before the snapshot is read (`observe` returns it), so that no update falls between the two.
        initial = store.observe { update in
            let kept = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.changes.append(Change(update: update, madeAt: EngineClock.now()))
                return true
            }
            if kept { doorbell.ring() }
        }
    }

    // The store's observer holds only `state`: a listener that is gone stops the keeping too.
    deinit {
        close()
    }

    /// The changes since the last call, oldest first; on the event loop's thread, when its doorbell rang.
    func take() -> [Change] {
        state.withLock { state in
            defer { state.changes.removeAll(keepingCapacity: true) }
            return state.changes
        }
    }

    /// The listener ended: later changes are dropped, not kept for a listener that no longer takes them.
    func close() {
        state.withLock { state in
            state.closed = true
            state.changes = []
        }
    }
}
