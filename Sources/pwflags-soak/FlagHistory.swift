import FlagsCore
import UnixIO

/// What `getAll` returned at each revision, kept as one hash per flag so that ten minutes of revisions stay
/// small: the reference every subscriber's state is checked against.
final class FlagHistory: Sendable {
    private let hashes = Locked<[Int: [String: Int]]>([:])

    /// Records the flags of `getAll` at `revision`.
    func record(revision: Int, flags: [JSONValue]) {
        var entries: [String: Int] = [:]
        for flag in flags {
            guard let key = flag["key"]?.stringValue else { continue }
            entries[key] = Self.entryHash(key: key, flag: flag)
        }
        hashes.withLock { $0[revision] = entries }
    }

    /// The digest of the flags at `revision`, restricted to `keys` (nil: every key); nil for an unknown revision.
    func digest(at revision: Int, keys: Set<String>?) -> Int? {
        hashes.withLock { hashes -> Int? in
            guard let entries = hashes[revision] else { return nil }
            guard let keys else { return entries.values.reduce(0, &+) }
            return keys.reduce(0) { sum, key in sum &+ (entries[key] ?? 0) }
        }
    }

    /// The digest of a subscriber's flags, comparable with `digest(at:keys:)`: independent of order.
    static func digest(_ flags: [String: JSONValue]) -> Int {
        flags.reduce(0) { sum, entry in sum &+ entryHash(key: entry.key, flag: entry.value) }
    }

    private static func entryHash(key: String, flag: JSONValue) -> Int {
        var hasher = Hasher()
        hasher.combine(key)
        hasher.combine(flag)
        return hasher.finalize()
    }
}
