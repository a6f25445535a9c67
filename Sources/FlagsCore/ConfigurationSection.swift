/// A `[Section]` of the configuration file (docs/configuration.md), in the order the file lists them.
public enum ConfigurationSection: String, Sendable, CaseIterable {
    case pushwoosh = "Pushwoosh"
    case featureFlags = "FeatureFlags"
    case daemon = "Daemon"
    case ofrep = "OFREP"
    case dbus = "DBus"
    case varlink = "Varlink"
    case telemetry = "Telemetry"

    /// The keys that belong in this section, in the order of docs/configuration.md.
    public var keys: [ConfigurationKey] { ConfigurationKey.allCases.filter { $0.section == self } }
}
