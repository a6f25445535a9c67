import FlagsCore
import OFREP
import Synchronization
import UnixIO

/// The flag reads the daemon answered, counted for the telemetry's `feature_flag.evaluation` records: one
/// entry per flag, variant, reason and flag-set revision, with a count, however often the flag is read.
///
/// Off (the default), counting is one atomic load. On, it is one uncontended lock and a dictionary update; the
/// entries are bounded by `limit` and each key's length by `maximumKeyBytes`, so that a local program reading a
/// million keys that do not exist cannot grow the daemon: what does not fit is counted as dropped. The exporter
/// takes the entries at each interval and gives back what it could not send.
final class EvaluationTally: Sendable {
    /// What one record aggregates.
    struct Key: Hashable, Sendable {
        var flagKey: String
        /// The deciding rule (`OFREPFlags.variant`); nil for a key with no flag.
        var variant: String?
        /// The convention's reason: `targeting_match`, `default`, `disabled`, `static`, `cached`, `stale`,
        /// `error`.
        var reason: String
        /// The flag set's revision the read saw (`feature_flag.version`).
        var revision: Int
    }

    /// A record's count and what it reports beside its key.
    struct Entry: Sendable, Equatable {
        var count: Int
        /// The flag's value when it was read (its `enabled`), for `ExportFlagValues=yes`; nil for a missing key.
        var value: Bool?
        /// When the entry was first counted, in Unix nanoseconds.
        var firstSeen: UInt64
    }

    /// What the exporter takes at once.
    struct Batch: Sendable, Equatable {
        var entries: [Key: Entry] = [:]
    }

    /// Longer keys are counted as dropped, not kept: a real flag key is short.
    static let maximumKeyBytes = 256

    private let on = Atomic<Bool>(false)
    /// The refresher's verdict, which turns every reason into `stale` while it holds; its feed sets it with every
    /// status it publishes (`markStale`).
    private let stale = Atomic<Bool>(false)
    private let state = Locked(State())

    private struct State {
        var batch = Batch()
        var limit = 1000
        /// Dropped since the daemon started, for the metric.
        var droppedTotal = 0
    }

    init() {}

    /// Starts or stops counting; stopping forgets what was counted.
    func configure(enabled: Bool, limit: Int) {
        state.withLock {
            $0.limit = limit
            if !enabled { $0.batch = Batch() }
        }
        on.store(enabled, ordering: .relaxed)
    }

    /// Whether reads are counted now.
    var isOn: Bool { on.load(ordering: .relaxed) }

    /// Tells the tally whether the served flags are stale (refreshes fail past their time): called by the feed of
    /// the refresher in effect whenever it publishes the status, so that a read counts as `stale` from the moment
    /// `status` says so. Only a change is stored: a status published at every call need not dirty the cache line
    /// every read loads.
    func markStale(_ isStale: Bool) {
        guard stale.load(ordering: .relaxed) != isStale else { return }
        stale.store(isStale, ordering: .relaxed)
    }

    /// Counts one read of `key` that found `flag` (nil: no such flag) in the flag set at `revision`.
    @inline(__always)
    func evaluated(_ key: String, flag: Flag?, revision: Int) {
        guard on.load(ordering: .relaxed) else { return }
        count(key, flag: flag, revision: revision)
    }

    /// Counts one read of `key` in `snapshot`, looking the flag up only when counting is on.
    @inline(__always)
    func evaluated(_ key: String, in snapshot: FlagSnapshot) {
        guard on.load(ordering: .relaxed) else { return }
        count(key, flag: snapshot.flags[key], revision: snapshot.revision)
    }

    private func count(_ key: String, flag: Flag?, revision: Int) {
        let reason: String
        if let flag {
            reason = stale.load(ordering: .relaxed) ? "stale" : OFREPFlags.reason(of: flag).lowercased()
        } else {
            reason = "error"
        }
        let tallyKey = Key(
            flagKey: key, variant: flag.map { OFREPFlags.variant(ruleId: $0.ruleId) }, reason: reason,
            revision: revision)
        state.withLock { state in
            if var existing = state.batch.entries[tallyKey] {
                existing.count += 1
                state.batch.entries[tallyKey] = existing
                return
            }
            guard key.utf8.count <= Self.maximumKeyBytes, state.batch.entries.count < state.limit else {
                state.droppedTotal += 1
                return
            }
            state.batch.entries[tallyKey] = Entry(
                count: 1, value: flag?.isEnabled, firstSeen: MonotonicClock.wallNanoseconds())
        }
    }

    /// Takes what was counted since the last take.
    func take() -> Batch {
        state.withLock { $0.batch.take() }
    }

    /// Gives back a batch that could not be sent, merged into what was counted since; entries past the limit are
    /// dropped and counted.
    func giveBack(_ batch: Batch) {
        state.withLock { state in
            for (key, entry) in batch.entries {
                if var existing = state.batch.entries[key] {
                    existing.count += entry.count
                    existing.firstSeen = min(existing.firstSeen, entry.firstSeen)
                    state.batch.entries[key] = existing
                } else if state.batch.entries.count < state.limit {
                    state.batch.entries[key] = entry
                } else {
                    state.droppedTotal += entry.count
                }
            }
        }
    }

    /// Counts a batch the collector refused for good as dropped.
    func refused(_ batch: Batch) {
        state.withLock { $0.droppedTotal += batch.entries.values.reduce(0) { $0 + $1.count } }
    }

    /// Reads dropped since the daemon started.
    var droppedTotal: Int { state.withLock(\.droppedTotal) }
}

extension EvaluationTally.Batch {
    /// Empties the batch and returns what it held.
    fileprivate mutating func take() -> Self {
        defer { self = Self() }
        return self
    }
}
