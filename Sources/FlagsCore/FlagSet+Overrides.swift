/// The layering of `FlagStore`: a source's flags marked with their source, and overrides on top.
extension FlagSet {
    /// The set with `overrides` layered on top: each overridden key reads as the override says, an override of a
    /// key the set lacks adds that flag.
    public func applying(_ overrides: [FlagKey: FlagOverride]) -> FlagSet {
        guard !overrides.isEmpty else { return self }
        var flags = entries
        for (key, override) in overrides { flags[key] = override.applied(to: entries[key]) }
        return FlagSet(Array(flags.values))
    }

    /// The set with every flag marked as coming from `source`.
    public func marked(_ source: FlagSource) -> FlagSet {
        // In place: the keys and the table stay as they are, nothing is hashed again.
        var copy = self
        var index = copy.entries.startIndex
        while index != copy.entries.endIndex {
            copy.entries.values[index].source = source
            copy.entries.formIndex(after: &index)
        }
        return copy
    }
}
