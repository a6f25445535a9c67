public import FlagsCore
import Synchronization

/// The flags `get` returns: the one place the visible flag set changes, and the source of change events.
///
/// Sources (the local file, Pushwoosh) call `replace(with:)`; an update that changes nothing visible is
/// swallowed here (R9), so no listener ever hears of an identical response.
public final class FlagStore: Sendable {
    private struct State {
        var snapshot: FlagSnapshot
        var observers: [@Sendable (FlagUpdate) -> Void] = []
    }

    /// The epoch of every snapshot: one store lives as long as the daemon, reloads included.
    public let epoch: String
    private let state: Mutex<State>

    public init() {
        epoch = DaemonEpoch.make()
        state = Mutex(State(snapshot: .initial(epoch: epoch)))
    }

    /// The current snapshot.
    public var current: FlagSnapshot { state.withLock { $0.snapshot } }

    /// Registers an observer of changes and returns the snapshot it starts from.
    ///
    /// Observers are called in revision order while the store is locked: they must be quick (hand the
    /// update to a queue) and must not call back into the store.
    public func observe(_ observer: @escaping @Sendable (FlagUpdate) -> Void) -> FlagSnapshot {
        state.withLock { state in
            state.observers.append(observer)
            return state.snapshot
        }
    }

    /// Makes `flags` the visible set; returns the update, or nil when nothing `get` returns has changed.
    @discardableResult
    public func replace(with flags: FlagSet) -> FlagUpdate? {
        state.withLock { state in
            let diff = state.snapshot.flags.diff(to: flags)
            guard !diff.isEmpty else { return nil }
            let update = FlagUpdate(
                snapshot: FlagSnapshot(epoch: epoch, revision: state.snapshot.revision + 1, flags: flags), diff: diff)
            state.snapshot = update.snapshot
            for observer in state.observers { observer(update) }
            return update
        }
    }
}
