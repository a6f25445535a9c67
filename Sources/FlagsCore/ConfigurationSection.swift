/// A `[Section]` of the configuration file (README, Configuration), in the order the file lists them.
public enum ConfigurationSection: String, Sendable, CaseIterable {
    case pushwoosh = "Pushwoosh"
    case featureFlags = "FeatureFlags"
    case daemon = "Daemon"
    case ofrep = "OFREP"

    /// The keys that belong in this section, in the order of the README's Configuration section.
    public var keys: [ConfigurationKey] { ConfigurationKey.allCases.filter { $0.section == self } }
}
