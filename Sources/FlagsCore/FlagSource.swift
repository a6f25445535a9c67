/// Where a served flag's value came from: the `source` member of the flag object.
public enum FlagSource: String, Sendable, Hashable, CaseIterable {
    /// Pushwoosh's response (or the disk cache of it).
    case pushwoosh
    /// The local flags file (`LocalFlagsFile`).
    case file
    /// The flags shipped with the device image (`SeedFile`), served until the first good fetch.
    case seed
    /// A local override set on this device (`setOverride`); the source's own value is the flag's `sourceValue`.
    case override
}
