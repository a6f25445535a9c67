import FlagsCore
import UnixIO

/// The revision at which each key last changed (appeared, changed or went away), for `explain`.
///
/// An observer of the store's diffs rather than a part of the store: the store stays the one place the flag set
/// changes, and this only listens. Keys the store held when observation began count as changed at that
/// revision. It holds one integer per key ever seen since the daemon started, so it is bounded by the keys the
/// sources ever sent.
final class FlagChangeLog: Sendable {
    private let revisions = Locked<[FlagKey: Int]>([:])

    /// Starts observing `store`; create it before anything replaces the store's flags, so that it sees them all.
    init(observing store: FlagStore) {
        let start = store.observe { [self] update in record(update) }
        guard start.revision > 0 else { return }
        revisions.withLock { table in
            for flag in start.flags.sorted where table[FlagKey(flag.key)] == nil {
                table[FlagKey(flag.key)] = start.revision
            }
        }
    }

    private func record(_ update: FlagUpdate) {
        let revision = update.snapshot.revision
        revisions.withLock { table in
            for flag in update.diff.changed { table[FlagKey(flag.key)] = revision }
            for key in update.diff.removed { table[FlagKey(key)] = revision }
        }
    }

    /// The revision at which `key` last changed; nil when it never has since the daemon started.
    func revision(of key: String) -> Int? {
        revisions.withLock { $0[FlagKey(key)] }
    }
}
