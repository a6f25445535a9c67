public import FlagsCore
import Synchronization

/// The flags `get` returns: the one place the visible flag set changes, and the source of change events.
///
/// It holds what the source serves (the local file, Pushwoosh) and the local overrides, and publishes the two
/// layered: the override on top, the source's own value kept in the flag (`sourceValue`), so that every reader
/// sees overrides with no change of its own. Sources call `replace(with:from:)`; an update that changes nothing
/// visible is swallowed here (R9), so no listener ever hears of an identical response.
public final class FlagStore: Sendable {
    private struct State {
        var snapshot: FlagSnapshot
        /// What the source serves, each flag marked with its source.
        var sourceFlags = FlagSet()
        var overrides: [FlagKey: FlagOverride] = [:]
        var observers: [@Sendable (FlagUpdate) -> Void] = []

        /// Makes the layered set visible; the update, or nil when nothing `get` returns has changed.
        mutating func publish() -> FlagUpdate? {
            let flags = sourceFlags.applying(overrides)
            let diff = snapshot.flags.diff(to: flags)
            guard !diff.isEmpty else { return nil }
            let update = FlagUpdate(
                snapshot: FlagSnapshot(epoch: snapshot.epoch, revision: snapshot.revision + 1, flags: flags), diff: diff
            )
            snapshot = update.snapshot
            for observer in observers { observer(update) }
            return update
        }
    }

    /// The epoch of every snapshot: one store lives as long as the daemon, reloads included.
    public let epoch: String
    private let state: Mutex<State>

    /// A store that starts with `overrides` (kept from the previous run) and no flags from a source.
    public init(overrides: [FlagOverride] = []) {
        epoch = DaemonEpoch.make()
        var initial = State(snapshot: .initial(epoch: epoch))
        initial.overrides = Dictionary(overrides.map { (FlagKey($0.key), $0) }, uniquingKeysWith: { _, last in last })
        _ = initial.publish()
        state = Mutex(initial)
    }

    /// The current snapshot.
    public var current: FlagSnapshot { state.withLock { $0.snapshot } }

    /// How many overrides are in effect, without copying or sorting them (the status line, the metrics).
    public var overrideCount: Int { state.withLock { $0.overrides.count } }

    /// The overrides in effect, sorted by key.
    public var overrides: [FlagOverride] {
        state.withLock { $0.overrides.sorted { $0.key < $1.key }.map(\.value) }
    }

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

    /// Makes `flags` what the source serves, marked as coming from `source` (nil: as they are); returns the
    /// update, or nil when nothing `get` returns has changed (an overridden key's source value counts).
    @discardableResult
    public func replace(with flags: FlagSet, from source: FlagSource? = nil) -> FlagUpdate? {
        state.withLock { state in
            state.sourceFlags = source.map { flags.marked($0) } ?? flags
            return state.publish()
        }
    }

    /// Sets (or replaces) the override of its key; returns the flag now served for it.
    @discardableResult
    public func setOverride(_ override: FlagOverride) -> Flag {
        state.withLock { state in
            let key = FlagKey(override.key)
            state.overrides[key] = override
            _ = state.publish()
            return state.snapshot.flags[key] ?? override.applied(to: state.sourceFlags[key])
        }
    }

    /// Removes the override of `key`, or every override when `key` is nil; returns the keys it removed, sorted.
    @discardableResult
    public func clearOverride(_ key: String?) -> [String] {
        state.withLock { state in
            let removed: [FlagKey]
            if let key {
                removed = state.overrides.removeValue(forKey: FlagKey(key)) == nil ? [] : [FlagKey(key)]
            } else {
                removed = Array(state.overrides.keys)
                state.overrides = [:]
            }
            _ = state.publish()
            return removed.sorted().map(\.string)
        }
    }

    /// True when `key` has an override, or there is room for one more.
    public func mayOverride(_ key: String, limit: Int) -> Bool {
        state.withLock { $0.overrides[FlagKey(key)] != nil || $0.overrides.count < limit }
    }
}
