/// One change of the mirror, as `FeatureFlags.updates()` delivers it.
///
/// When the stream's buffer drops elements, the keys of the dropped ones are lost, but the mirror is always
/// current: read the values with `get(_:)`, and take the keys as a hint.
public struct FeatureFlagsUpdate: Sendable, Equatable {
    /// The new state of each added or changed flag, sorted by key.
    public let changed: [FeatureFlag]
    /// The keys that no longer read as a flag, sorted.
    public let removed: [String]

    /// An update with these changed flags and removed keys, each sorted as the mirror sorts them.
    public init(changed: [FeatureFlag], removed: [String]) {
        self.changed = changed
        self.removed = removed
    }
}
