/// A key of the configuration file, spelled as in docs/configuration.md; case-sensitive, as in
/// systemd.
///
/// The cases run in the order of docs/configuration.md, which the rendering and the reference file follow. A key
/// is spelled `name` in its file; the raw value is the same, except for a key whose name another section uses
/// too (`[Varlink] SocketPath`), whose raw value is `Section.Name`.
public enum ConfigurationKey: String, Sendable, CaseIterable {
    // [Pushwoosh]
    case applicationCode = "ApplicationCode"
    case serverURL = "ServerURL"
    case apiTokenFile = "APITokenFile"
    case hwid = "HWID"
    case userID = "UserID"
    case deviceType = "DeviceType"
    case requestTimeout = "RequestTimeout"
    case caFile = "CAFile"

    // [FeatureFlags]
    case cacheMaxAge = "CacheMaxAge"
    case refreshInterval = "RefreshInterval"
    case sessionTimeout = "SessionTimeout"
    case sessionMaxAge = "SessionMaxAge"
    case refreshThrottle = "RefreshThrottle"
    case disableThrottle = "DisableThrottle"
    case lifecycle = "Lifecycle"
    case localFlagsFile = "LocalFlagsFile"
    case seedFile = "SeedFile"
    case retryBackoff = "RetryBackoff"
    case refreshSpread = "RefreshSpread"
    case sessionStartDelay = "SessionStartDelay"

    // [Daemon]
    case socketPath = "SocketPath"
    case socketMode = "SocketMode"
    case stateDirectory = "StateDirectory"
    case controlGroups = "ControlGroups"
    case maxConnections = "MaxConnections"
    case maxLineBytes = "MaxLineBytes"
    case maxPendingBytes = "MaxPendingBytes"
    case maxSubscriptions = "MaxSubscriptions"
    case maxListenKeys = "MaxListenKeys"
    case idleConnectionTimeout = "IdleConnectionTimeout"
    case logLevel = "LogLevel"
    case metricsFile = "MetricsFile"
    case metricsInterval = "MetricsInterval"

    // [OFREP]
    case listenAddress = "ListenAddress"
    case tokenFile = "TokenFile"
    case connectionLimit = "ConnectionLimit"
    case idleTimeout = "IdleTimeout"
    case requestRate = "RequestRate"
    case allowedOrigins = "AllowedOrigins"

    // [DBus]
    case bus = "Bus"
    case busName = "Name"

    // [Varlink]
    case varlinkSocketPath = "Varlink.SocketPath"

    // [Telemetry]
    case otlpEndpoint = "OTLPEndpoint"
    case exportUserId = "ExportUserId"
    case exportFlagValues = "ExportFlagValues"
    case maxEvaluationRecords = "MaxEvaluationRecords"

    /// The key as the file spells it, in its section.
    public var name: String {
        guard let dot = rawValue.firstIndex(of: ".") else { return rawValue }
        return String(rawValue[rawValue.index(after: dot)...])
    }

    /// The key spelled `name` in `section`, if there is one.
    public init?(name: String, in section: ConfigurationSection) {
        guard let key = Self.allCases.first(where: { $0.name == name && $0.section == section }) else { return nil }
        self = key
    }

    /// The section the key belongs in.
    public var section: ConfigurationSection {
        switch self {
        case .applicationCode, .serverURL, .apiTokenFile, .hwid, .userID, .deviceType, .requestTimeout, .caFile:
            .pushwoosh
        case .cacheMaxAge, .refreshInterval, .sessionTimeout, .sessionMaxAge, .refreshThrottle, .disableThrottle,
            .lifecycle, .localFlagsFile, .seedFile, .retryBackoff, .refreshSpread, .sessionStartDelay:
            .featureFlags
        case .socketPath, .socketMode, .stateDirectory, .controlGroups, .maxConnections, .maxLineBytes,
            .maxPendingBytes, .maxSubscriptions, .maxListenKeys, .idleConnectionTimeout, .logLevel, .metricsFile,
            .metricsInterval:
            .daemon
        case .listenAddress, .tokenFile, .connectionLimit, .idleTimeout, .requestRate, .allowedOrigins:
            .ofrep
        case .bus, .busName:
            .dbus
        case .varlinkSocketPath:
            .varlink
        case .otlpEndpoint, .exportUserId, .exportFlagValues, .maxEvaluationRecords:
            .telemetry
        }
    }
}
