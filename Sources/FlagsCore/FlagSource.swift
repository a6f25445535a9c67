/// Where a served flag's value came from: the `source` member of the flag object.
public enum FlagSource: String, Sendable, Hashable, CaseIterable {
    /// Pushwoosh's response (or the disk cache of it).
    case pushwoosh
    /// The local flags file (`LocalFlagsFile`).
    case file
    /// A local override set on this device (`setOverride`); the source's own value is the flag's `sourceValue`.
    case override
}
