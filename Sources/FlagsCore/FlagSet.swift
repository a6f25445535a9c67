/// The flags `get` can return, by key. An empty set and "no flags yet" read the same (R3).
public struct FlagSet: Sendable, Equatable {
    public private(set) var flags: [String: Flag]

    public init(_ flags: [Flag] = []) {
        self.flags = Dictionary(flags.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
    }

    public init(byKey flags: [String: Flag]) {
        self.flags = flags
    }

    public subscript(key: String) -> Flag? { flags[key] }

    public var count: Int { flags.count }
    public var isEmpty: Bool { flags.isEmpty }

    /// Every flag, sorted by key as `getAll` returns them.
    public var sorted: [Flag] { flags.values.sorted { $0.key < $1.key } }

    /// What changed from `self` to `newer` (R9): flags added or changed, keys removed.
    public func diff(to newer: FlagSet) -> FlagDiff {
        var changed: [Flag] = []
        for (key, flag) in newer.flags where flags[key] != flag {
            changed.append(flag)
        }
        let removed = flags.keys.filter { newer.flags[$0] == nil }
        return FlagDiff(changed: changed.sorted { $0.key < $1.key }, removed: removed.sorted())
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
    public func restricted(to keys: Set<String>?) -> FlagDiff {
        guard let keys else { return self }
        return FlagDiff(
            changed: changed.filter { keys.contains($0.key) }, removed: removed.filter { keys.contains($0) })
    }
}
