import FlagsCore

/// What a subscription's keys count against `MaxListenKeys`: one per key, and one more for every further 64
/// bytes of a long key, so that the limit bounds the memory the keys take and not only their number.
///
/// A subscription to every key (`listen` without keys) holds no key and counts nothing.
enum ListenKeyCost {
    /// The key bytes one unit pays for.
    static let bytesPerUnit = 64

    /// The units of `keys` (already without duplicates); 0 for every key.
    static func units(of keys: Set<FlagKey>?) -> Int {
        guard let keys else { return 0 }
        return keys.reduce(0) { total, key in
            total + max(1, (key.string.utf8.count + bytesPerUnit - 1) / bytesPerUnit)
        }
    }
}
