import FlagsCore
import FlagsProtocol

/// One immutable state of the visible flag set, with every flag's wire form encoded once per change.
///
/// Requests read snapshots without copying or re-encoding: `get` answers with bytes encoded when the flags
/// arrived, not per request.
final class FlagSnapshot: Sendable {
    /// The daemon's epoch (`DaemonEpoch`): the same for every snapshot of one daemon run.
    let epoch: String
    /// Counts changes of the visible flag set since the daemon started (docs/protocol.md).
    let revision: Int
    let flags: FlagSet
    /// Each flag's wire object, by exact key.
    let encoded: [FlagKey: [UInt8]]
    /// The `flags` array of `getAll` and `listen`, sorted by key, shared by every connection that asks.
    let encodedList: ByteChunk
    /// The `getAll` result up to its `flags` array (`{"epoch":…,"revision":N,"flags":`), written once per change.
    let listingHead: [UInt8]

    /// The snapshot of `flags`. With `previous` and the `diff` from it, only the changed flags are encoded again:
    /// the others are byte for byte what they were, so a change costs what it changes plus copying the list.
    init(epoch: String, revision: Int, flags: FlagSet, previous: FlagSnapshot? = nil, diff: FlagDiff? = nil) {
        self.epoch = epoch
        self.revision = revision
        self.flags = flags
        // A diff that changed every flag (the first set a daemon serves, a whole new set) already lists them in
        // key order: sorting them again was a tenth of a start with a cached set. Nothing is then reused either.
        let allChanged = diff.flatMap { $0.changed.count == flags.count ? $0.changed : nil }
        let changed = allChanged == nil ? diff.map { Set($0.changed.map { FlagKey($0.key) }) } : nil
        var encoded: [FlagKey: [UInt8]] = [:]
        encoded.reserveCapacity(flags.count)
        var list: [UInt8] = [UInt8(ascii: "[")]
        let inOrder = allChanged ?? flags.sorted
        for (position, flag) in inOrder.enumerated() {
            let key = FlagKey(flag.key)
            let reused = changed.flatMap { $0.contains(key) ? nil : previous?.encoded[key] }
            let bytes = reused ?? flag.wireBytes
            encoded[key] = bytes
            if position > 0 { list.append(UInt8(ascii: ",")) }
            list.append(contentsOf: bytes)
        }
        list.append(UInt8(ascii: "]"))
        self.encoded = encoded
        self.encodedList = ByteChunk(list)
        var head: [UInt8] = []
        FlagListing.writeHead(epoch: epoch, revision: revision, listen: nil, to: &head)
        self.listingHead = head
    }

    /// The empty set every daemon starts with.
    static func initial(epoch: String) -> FlagSnapshot {
        FlagSnapshot(epoch: epoch, revision: 0, flags: FlagSet())
    }
}

/// A change of the visible flag set (R9): the new snapshot (its epoch and revision), what differs from the
/// previous one, and when the flags served expire. It carries everything a `flagsChanged` notification says,
/// so a subscriber never reads any of it from elsewhere at a moment that may not match the change.
struct FlagUpdate: Sendable {
    let snapshot: FlagSnapshot
    let diff: FlagDiff
    /// When the source's flags reach `CacheMaxAge`, as the source said when it served them.
    let expiry: FlagExpiry

    init(snapshot: FlagSnapshot, diff: FlagDiff, expiry: FlagExpiry = .never) {
        self.snapshot = snapshot
        self.diff = diff
        self.expiry = expiry
    }
}
