/// The daemon's configuration (docs/configuration.md): every key with its default.
///
/// Filled in one documented order: these defaults, the file, its `.d/` drop-ins in lexical order, then the
/// command line. Defaults that depend on the environment (`$STATE_DIRECTORY`, `$CREDENTIALS_DIRECTORY`, the
/// machine id) stay nil here and are resolved by the daemon, so that this type stays pure.
public struct Configuration: Sendable, Equatable {
    // MARK: [Pushwoosh]

    /// The Pushwoosh application code; empty means the local flag source and no network at all.
    public var applicationCode: String = ""
    /// A reverse proxy's address; nil means `https://{ApplicationCode}.api.pushwoosh.com/json/1.3/`.
    public var serverURL: String?
    /// The file holding the API token; nil means `$CREDENTIALS_DIRECTORY/pushwoosh-api-token` when that exists.
    public var apiTokenFile: String?
    /// The device id; nil means derived from the machine id.
    public var hwid: String?
    /// The user id until a client sets one; nil means the HWID.
    public var userID: String?
    /// Sent as `device_type` when set.
    public var deviceType: Int?
    /// The whole HTTP exchange.
    public var requestTimeout: Duration = .seconds(10)
    /// A PEM bundle of certificate authorities trusted for Pushwoosh's TLS besides the system store (a
    /// TLS-inspecting proxy's CA); nil: the system store alone.
    public var caFile: String?

    // MARK: [FeatureFlags]

    public var cacheMaxAge: Duration = .seconds(24 * 3600)
    public var refreshInterval: Duration = .seconds(3600)
    public var sessionTimeout: Duration = .seconds(30 * 60)
    public var sessionMaxAge: Duration = .seconds(24 * 3600)
    public var refreshThrottle: Duration = .seconds(5 * 60)
    public var disableThrottle: Bool = false
    public var lifecycle: Lifecycle = .foreground
    /// The local flags file, served when `applicationCode` is empty.
    public var localFlagsFile: String?
    /// Flags shipped with the device image (`pwflags export-seed`), served while the daemon has no usable flags
    /// of its own for `applicationCode`, until the first good fetch.
    public var seedFile: String?
    public var retryBackoff: Duration = .seconds(30)
    /// F1: interval refreshes land at the device's own phase within this much (at most `refreshInterval`), so
    /// a fleet powered on together is spread over it; zero: exactly `refreshInterval` after the last fetch.
    public var refreshSpread: Duration = .seconds(3600)
    /// F2: the longest a session start with usable stored flags waits for its request; zero: at once.
    public var sessionStartDelay: Duration = .seconds(3600)

    // MARK: [Daemon]

    public var socketPath: String = Configuration.defaultSocketPath
    public var socketMode: UInt32 = 0o660
    /// nil means `$STATE_DIRECTORY`, else `/var/lib/pwflagsd`.
    public var stateDirectory: String?
    public var controlGroups: [String] = []
    public var maxConnections: Int = 256
    public var maxLineBytes: Int = 65536
    public var maxPendingBytes: Int = 4_194_304
    public var maxSubscriptions: Int = 64
    /// The keys one connection may listen to, over all its subscriptions; a key counts once per 64 bytes it
    /// starts, and a subscription to every key counts nothing.
    public var maxListenKeys: Int = 1024
    /// How long a connection with no subscription and nothing asked or owed may stay open.
    public var idleConnectionTimeout: Duration = .seconds(300)
    public var logLevel: LogLevel = .info
    /// Where the daemon writes its metrics in the Prometheus text format for node_exporter's textfile
    /// collector, replacing the file atomically every `metricsInterval`; nil: no file.
    public var metricsFile: String?
    public var metricsInterval: Duration = .seconds(15)

    // MARK: [OFREP]

    /// Where the OpenFeature remote evaluation listener listens; nil: it is off.
    public var ofrepListenAddress: OFREPListenAddress?
    /// The file holding the token TCP clients must send; required with a TCP `ofrepListenAddress`.
    public var ofrepTokenFile: String?
    /// OFREP connections open at once; more are closed as soon as they are accepted.
    public var ofrepConnectionLimit: Int = 64
    /// How long a connection may take to send a whole request, counted from its previous answer (or from
    /// its start); also how long an idle keep-alive connection stays open.
    public var ofrepIdleTimeout: Duration = .seconds(30)
    /// Requests a second each client (a Unix socket user, a TCP address) may make on average; 0: no limit.
    public var ofrepRequestRate: Int = 500
    /// The web origins (`scheme://host[:port]`, exact) whose pages may read the listener from a browser (CORS);
    /// empty: none.
    public var ofrepAllowedOrigins: [String] = []

    // MARK: [DBus]

    /// The message bus the daemon also serves flags on (docs/dbus.md); nil: none.
    public var bus: MessageBus? = .system
    /// The well-known name the daemon owns on that bus.
    public var busName = Configuration.defaultBusName

    // MARK: [Varlink]

    /// The Unix socket the daemon serves Varlink on (docs/varlink.md); nil: it is off.
    public var varlinkSocketPath: String?

    // MARK: [Telemetry]

    /// The OpenTelemetry collector's OTLP/HTTP base address (docs/telemetry.md); nil: the standard
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` decides, and without it nothing is exported.
    public var otlpEndpoint: String?
    /// Whether evaluation records carry the user id, and how: never in the clear.
    public var exportUserId: UserIdExport = .no
    /// Whether evaluation records carry the flag's value (`feature_flag.result.value`) besides its variant.
    public var exportFlagValues = false
    /// The most evaluation records (one per flag, variant and reason) one export interval keeps; more are
    /// counted as dropped.
    public var maxEvaluationRecords = 1000

    public init() {}

    /// Where clients look when neither `--socket` nor `$PWFLAGS_SOCKET` says otherwise.
    public static let defaultSocketPath = "/run/pwflagsd/pwflagsd.sock"
    /// The configuration file read when `--config` is not given, if it exists.
    public static let defaultConfigPath = "/etc/pwflagsd/pwflagsd.conf"
    /// The bus name when `[DBus] Name=` is not set.
    public static let defaultBusName = "io.github.pwflagsd.Flags1"
    /// The state directory when neither the file nor `$STATE_DIRECTORY` names one.
    public static let defaultStateDirectory = "/var/lib/pwflagsd"

    /// True when the daemon serves `localFlagsFile` and never calls Pushwoosh.
    public var usesLocalSource: Bool { applicationCode.isEmpty }
}

/// Whether the telemetry's evaluation records carry the user id (`[Telemetry] ExportUserId=`).
public enum UserIdExport: String, Sendable, CaseIterable {
    /// Never: the records say nothing of the user.
    case no
    /// As `feature_flag.context.id`, a SHA-256 of the application code and the user id, never the id itself.
    case hashed
}

/// A message bus the daemon can serve flags on (`[DBus] Bus=`).
public enum MessageBus: String, Sendable, CaseIterable {
    /// The system bus: every local user's programs, by the bus policy.
    case system
    /// The user's session bus: a daemon of one desktop user (`systemctl --user`).
    case session
}

/// How the daemon learns about the app's foreground (docs/behaviour.md: sessions on a device).
public enum Lifecycle: String, Sendable, CaseIterable {
    /// The device is an app that is always in the foreground.
    case foreground
    /// Programs report the app's state with `setAppState`.
    case client
}

/// Log priorities, in the journal's names, most verbose first.
public enum LogLevel: String, Sendable, CaseIterable, Comparable {
    case debug, info, notice, warning, err

    /// The syslog priority the journal's `PRIORITY=` field takes.
    public var syslogPriority: Int {
        switch self {
        case .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .err: 3
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.syslogPriority > rhs.syslogPriority }
}
