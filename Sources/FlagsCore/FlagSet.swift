/// The flags `get` can return, by key. An empty set and "no flags yet" read the same (R3).
///
/// Keys are exact (`FlagKey`): two keys that differ in any byte are two flags, even when Swift would call the
/// strings equal.
public struct FlagSet: Sendable, Equatable {
    public internal(set) var entries: [FlagKey: Flag]

    public init(_ flags: [Flag] = []) {
        self.entries = Dictionary(flags.map { (FlagKey($0.key), $0) }, uniquingKeysWith: { _, last in last })
    }

    public init(byKey flags: [String: Flag]) {
        self.entries = Dictionary(flags.values.map { (FlagKey($0.key), $0) }, uniquingKeysWith: { _, last in last })
    }

    /// The flags by `String` key, for code that reads keys as Swift strings: keys that are canonically
    /// equivalent but not identical fold into one entry here, so the daemon reads `entries`.
    public var flags: [String: Flag] {
        Dictionary(entries.values.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
    }

    public subscript(key: String) -> Flag? { entries[FlagKey(key)] }

    public subscript(key: FlagKey) -> Flag? { entries[key] }

    /// The set with the flag of `key` replaced by `flag` (nil: removed), in time that does not depend on the
    /// size of the other flags beyond copying the table.
    public func replacing(_ key: FlagKey, with flag: Flag?) -> FlagSet {
        var copy = self
        copy.entries[key] = flag
        return copy
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    /// Every flag, sorted by key (byte order) as `getAll` returns them.
    /// The keys are sorted, not the entries: moving (key, flag) pairs in a sort went through the runtime's
    /// generic tuple copies and was most of a warm start's time with 1,000 cached flags.
    public var sorted: [Flag] { entries.keys.sorted().compactMap { entries[$0] } }

    /// What changed from `self` to `newer` (R9): flags added or changed, keys removed. A flag whose key or
    /// strings differ in any byte has changed, even when Swift's string equality says they are equal.
    public func diff(to newer: FlagSet) -> FlagDiff {
        // From nothing (a start, a new user): every flag is new, in key order.
        guard !entries.isEmpty else { return FlagDiff(changed: newer.sorted) }
        var changed: [FlagKey] = []
        for (key, flag) in newer.entries {
            guard let old = entries[key], old.isIdentical(to: flag) else {
                changed.append(key)
                continue
            }
        }
        let removed = entries.keys.filter { newer.entries[$0] == nil }
        return FlagDiff(
            changed: changed.sorted().compactMap { newer.entries[$0] }, removed: removed.sorted().map(\.string))
    }
}

/// The difference between two flag sets, each list sorted by key.
public struct FlagDiff: Sendable, Equatable {
    /// The new state of every added or changed flag.
    public var changed: [Flag]
    /// The keys that no longer read as a flag.
    public var removed: [String]

    public init(changed: [Flag] = [], removed: [String] = []) {
        self.changed = changed
        self.removed = removed
    }

    /// True when `get` returns the same for every key before and after.
    public var isEmpty: Bool { changed.isEmpty && removed.isEmpty }

    /// The part of the diff that touches `keys`; everything when `keys` is nil.
    public func restricted(to keys: Set<FlagKey>?) -> FlagDiff {
        guard let keys else { return self }
        return FlagDiff(
            changed: changed.filter { keys.contains(FlagKey($0.key)) },
            removed: removed.filter { keys.contains(FlagKey($0)) })
    }
}
