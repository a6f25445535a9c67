/// A `[Section]` of the configuration file (CONFIG.md), in the order the file lists them.
public enum ConfigurationSection: String, Sendable, CaseIterable {
    case pushwoosh = "Pushwoosh"
    case featureFlags = "FeatureFlags"
    case daemon = "Daemon"

    /// The keys that belong in this section, in CONFIG.md's order.
    public var keys: [ConfigurationKey] { ConfigurationKey.allCases.filter { $0.section == self } }
}
