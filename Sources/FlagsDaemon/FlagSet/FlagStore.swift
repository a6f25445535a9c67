import FlagsCore
import UnixIO

/// The flags `get` returns: the one place the visible flag set changes, and the source of change events.
///
/// It holds what the source serves (the local file, Pushwoosh) and the local overrides, and publishes the two
/// layered: the override on top, the source's own value kept in the flag (`sourceValue`), so that every reader
/// sees overrides with no change of its own. Sources call `replace(with:from:expiry:)`; an update that changes nothing
/// visible is swallowed here (R9), so no listener ever hears of an identical response.
final class FlagStore: Sendable {
    private struct State {
        var snapshot: FlagSnapshot
        /// What the source serves, each flag marked with its source.
        var sourceFlags = FlagSet()
        /// When `sourceFlags` reach `CacheMaxAge`, as their source said with them.
        var expiry = FlagExpiry.never
        var overrides: [FlagKey: FlagOverride] = [:]
        var observers: [@Sendable (FlagUpdate) -> Void] = []
    }

    /// The epoch of every snapshot: one store lives as long as the daemon, reloads included.
    let epoch: String
    /// What readers see; held only to read or swap it, never while a change is computed.
    private let state: Locked<State>
    /// One change at a time: a change reads the state, computes the new set and its diff outside `state`'s lock
    /// (readers never wait on that work), then swaps it in.
    private let changing = Locked(())

    /// A store that starts with `overrides` (kept from the previous run) and no flags from a source.
    init(overrides: [FlagOverride] = []) {
        epoch = DaemonEpoch.make()
        var initial = State(snapshot: .initial(epoch: epoch))
        initial.overrides = Dictionary(overrides.map { (FlagKey($0.key), $0) }, uniquingKeysWith: { _, last in last })
        let flags = initial.sourceFlags.applying(initial.overrides)
        let diff = initial.snapshot.flags.diff(to: flags)
        if !diff.isEmpty {
            initial.snapshot = FlagSnapshot(epoch: epoch, revision: initial.snapshot.revision + 1, flags: flags)
        }
        state = Locked(initial)
    }

    /// The current snapshot.
    var current: FlagSnapshot { state.withLock { $0.snapshot } }

    /// When the flags the source serves expire, as it said with them: what every update carries as `expiresAt`.
    var expiry: FlagExpiry { state.withLock { $0.expiry } }

    /// How many overrides are in effect, without copying or sorting them (the status line, the metrics).
    var overrideCount: Int { state.withLock { $0.overrides.count } }

    /// The overrides in effect, sorted by key.
    var overrides: [FlagOverride] {
        state.withLock { $0.overrides }.sorted { $0.key < $1.key }.map(\.value)
    }

    /// Registers an observer of changes and returns the snapshot it starts from.
    ///
    /// Observers are called in revision order, after the new snapshot is in place and outside the lock readers
    /// take, on the thread that made the change: they must be quick (hand the update to a queue) and must not
    /// change the store (a change waits for the one being told).
    func observe(_ observer: @escaping @Sendable (FlagUpdate) -> Void) -> FlagSnapshot {
        state.withLock { state in
            state.observers.append(observer)
            return state.snapshot
        }
    }

    /// Makes `flags` what the source serves until `expiry`: a source's one path into the store. The expiry is
    /// kept even when nothing visible changed (a response identical to the last one moves it), and every update
    /// from now on carries it.
    @discardableResult
    func replace(with flags: FlagSet, from source: FlagSource?, expiry: FlagExpiry) -> FlagUpdate? {
        changing.withLock { _ in
            let (snapshot, overrides) = state.withLock { ($0.snapshot, $0.overrides) }
            let sourceFlags = source.map { flags.marked($0) } ?? flags
            let layered = sourceFlags.applying(overrides)
            return publish(layered, diff: snapshot.flags.diff(to: layered), over: snapshot) { state in
                state.sourceFlags = sourceFlags
                state.expiry = expiry
            }
        }
    }

    /// Moves the expiry of the flags served when no flag changed (a reload changed `CacheMaxAge`, a wall-clock
    /// change made the age of the disk cache known): nothing is published, later updates and reads carry it.
    func restamp(_ expiry: FlagExpiry) {
        changing.withLock { _ in state.withLock { $0.expiry = expiry } }
    }

    /// Sets (or replaces) the override of its key; returns the flag now served for it. Costs the one flag it
    /// changes (and a copy of the table), whatever the number and size of the others.
    @discardableResult
    func setOverride(_ override: FlagOverride) -> Flag {
        changing.withLock { _ in
            let key = FlagKey(override.key)
            let (snapshot, sourceFlag) = state.withLock { ($0.snapshot, $0.sourceFlags[key]) }
            let flag = override.applied(to: sourceFlag)
            publish(one: key, flag, over: snapshot) { $0.overrides[key] = override }
            return flag
        }
    }

    /// Removes the override of `key`, or every override when `key` is nil; returns the keys it removed, sorted.
    @discardableResult
    func clearOverride(_ key: String?) -> [String] {
        changing.withLock { _ in
            let (snapshot, sourceFlags, overrides) = state.withLock { ($0.snapshot, $0.sourceFlags, $0.overrides) }
            guard let key else {
                publish(sourceFlags, diff: snapshot.flags.diff(to: sourceFlags), over: snapshot) { $0.overrides = [:] }
                return overrides.keys.sorted().map(\.string)
            }
            let flagKey = FlagKey(key)
            guard overrides[flagKey] != nil else { return [] }
            publish(one: flagKey, sourceFlags[flagKey], over: snapshot) { $0.overrides[flagKey] = nil }
            return [key]
        }
    }

    /// True when `key` has an override, or there is room for one more.
    func mayOverride(_ key: String, limit: Int) -> Bool {
        state.withLock { $0.overrides[FlagKey(key)] != nil || $0.overrides.count < limit }
    }

    /// Publishes the set with only `key` changed to `flag` (nil: gone).
    private func publish(one key: FlagKey, _ flag: Flag?, over snapshot: FlagSnapshot, _ apply: (inout State) -> Void) {
        let old = snapshot.flags[key]
        let same = old.map { old in flag.map { old.isIdentical(to: $0) } ?? false } ?? (flag == nil)
        let diff =
            same ? FlagDiff() : FlagDiff(changed: flag.map { [$0] } ?? [], removed: flag == nil ? [key.string] : [])
        publish(snapshot.flags.replacing(key, with: flag), diff: diff, over: snapshot, apply)
    }

    /// Swaps in the new state (under the lock only for the swap), then tells the observers; the update, or nil
    /// when nothing `get` returns has changed. Called with `changing` held, so `snapshot` is still current.
    @discardableResult
    private func publish(
        _ flags: FlagSet, diff: FlagDiff, over snapshot: FlagSnapshot, _ apply: (inout State) -> Void
    ) -> FlagUpdate? {
        guard !diff.isEmpty else {
            state.withLock { apply(&$0) }
            return nil
        }
        let next = FlagSnapshot(
            epoch: snapshot.epoch, revision: snapshot.revision + 1, flags: flags, previous: snapshot, diff: diff)
        let (update, observers) = state.withLock { state in
            apply(&state)
            state.snapshot = next
            return (FlagUpdate(snapshot: next, diff: diff, expiry: state.expiry), state.observers)
        }
        // Told after the swap, outside the lock readers take: a reader (the loop's `current`) never waits for an
        // observer. Still in this change's turn, so observers hear the updates in revision order.
        for observer in observers { observer(update) }
        return update
    }
}
