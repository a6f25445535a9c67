extension ConfigurationParser {
    /// Validates a non-empty value for `key` and stores it, or returns why it is wrong (leaving `configuration`).
    ///
    /// `name` is how the message calls the setting; `origin` locates the file whose directory relative paths are
    /// resolved against.
    static func apply(
        _ key: ConfigurationKey,
        value: String,
        name: String,
        origin: ConfigurationOrigin,
        to configuration: inout Configuration
    ) -> String? {
        let shown = quoted(value)
        switch key {
        case .applicationCode:
            guard PushwooshAddress.isApplicationCode(value) else {
                return "invalid application code '\(shown)' for \(name) (expected letters, digits and hyphens only)"
            }
            configuration.applicationCode = value
        case .serverURL:
            guard isHTTPURL(value) else {
                return "invalid URL '\(shown)' for \(name) (expected an absolute http:// or https:// URL with a host)"
            }
            configuration.serverURL = value
        case .apiTokenFile:
            if let message = pathProblem(value, name: name) { return message }
            configuration.apiTokenFile = resolved(value, relativeTo: origin)
        case .hwid:
            if let message = identifierProblem(value, name: name) { return message }
            configuration.hwid = value
        case .userID:
            if let message = identifierProblem(value, name: name) { return message }
            configuration.userID = value
        case .deviceType:
            guard let number = Int(value) else { return "invalid integer '\(shown)' for \(name)" }
            configuration.deviceType = number
        case .caFile:
            if let message = pathProblem(value, name: name) { return message }
            configuration.caFile = resolved(value, relativeTo: origin)
        case .requestTimeout:
            return setDuration(value, name: name, allowingZero: false, at: \.requestTimeout, in: &configuration)
        case .cacheMaxAge:
            return setDuration(value, name: name, allowingZero: false, at: \.cacheMaxAge, in: &configuration)
        case .refreshInterval:
            return setDuration(value, name: name, allowingZero: false, at: \.refreshInterval, in: &configuration)
        case .sessionTimeout:
            return setDuration(value, name: name, allowingZero: false, at: \.sessionTimeout, in: &configuration)
        case .sessionMaxAge:
            return setDuration(value, name: name, allowingZero: false, at: \.sessionMaxAge, in: &configuration)
        case .refreshThrottle:
            // R10: zero is meaningful, it turns the throttle window off without `DisableThrottle`.
            return setDuration(value, name: name, allowingZero: true, at: \.refreshThrottle, in: &configuration)
        case .retryBackoff:
            return setDuration(value, name: name, allowingZero: false, at: \.retryBackoff, in: &configuration)
        case .refreshSpread:
            // F1: zero gives the SDK's timing back, every refresh exactly RefreshInterval after the last.
            return setDuration(value, name: name, allowingZero: true, at: \.refreshSpread, in: &configuration)
        case .sessionStartDelay:
            // F2: zero sends a session start's request at once, as the SDK does.
            return setDuration(value, name: name, allowingZero: true, at: \.sessionStartDelay, in: &configuration)
        case .disableThrottle:
            return setBoolean(value, name: name, at: \.disableThrottle, in: &configuration)
        case .lifecycle:
            guard let lifecycle = Lifecycle(rawValue: value) else {
                return "invalid lifecycle '\(shown)' for \(name) (expected foreground or client)"
            }
            configuration.lifecycle = lifecycle
        case .localFlagsFile:
            if let message = pathProblem(value, name: name) { return message }
            configuration.localFlagsFile = resolved(value, relativeTo: origin)
        case .seedFile:
            if let message = pathProblem(value, name: name) { return message }
            configuration.seedFile = resolved(value, relativeTo: origin)
        case .socketPath:
            if let message = socketPathProblem(value, shown: shown, name: name) { return message }
            configuration.socketPath = value
        case .socketMode:
            guard let mode = octalMode(value) else {
                return "invalid mode '\(shown)' for \(name) (expected an octal mode from 0 to 0777, such as 0660)"
            }
            configuration.socketMode = mode
        case .stateDirectory:
            if let message = pathProblem(value, name: name) { return message }
            configuration.stateDirectory = resolved(value, relativeTo: origin)
        case .controlGroups:
            let (groups, refused) = words(value, valid: isGroupName)
            if let refused { return "invalid group name\(refused.plural) \(refused.list) for \(name)" }
            configuration.controlGroups = groups
        case .maxConnections:
            guard let number = positiveInteger(value) else { return positiveIntegerMessage(shown, name) }
            configuration.maxConnections = number
        case .maxLineBytes:
            guard let number = Int(value), number >= minimumMaxLineBytes, number <= maximumInteger else {
                return "invalid number '\(shown)' for \(name) (expected an integer from \(minimumMaxLineBytes) to "
                    + "\(maximumInteger))"
            }
            configuration.maxLineBytes = number
        case .maxPendingBytes:
            guard let number = positiveInteger(value) else { return positiveIntegerMessage(shown, name) }
            configuration.maxPendingBytes = number
        case .maxSubscriptions:
            guard let number = positiveInteger(value) else { return positiveIntegerMessage(shown, name) }
            configuration.maxSubscriptions = number
        case .maxListenKeys:
            guard let number = positiveInteger(value) else { return positiveIntegerMessage(shown, name) }
            configuration.maxListenKeys = number
        case .idleConnectionTimeout:
            return setDuration(
                value, name: name, allowingZero: false, at: \.idleConnectionTimeout, in: &configuration)
        case .logLevel:
            guard let level = LogLevel(rawValue: value) else {
                return "invalid log level '\(shown)' for \(name) (expected debug, info, notice, warning or err)"
            }
            configuration.logLevel = level
        case .metricsFile:
            guard value.hasPrefix("/") else { return "invalid path '\(shown)' for \(name) (must be absolute)" }
            if let message = pathProblem(value, name: name) { return message }
            configuration.metricsFile = value
        case .metricsInterval:
            return setDuration(value, name: name, allowingZero: false, at: \.metricsInterval, in: &configuration)
        case .listenAddress:
            guard let address = OFREPListenAddress(parsing: value) else {
                return "invalid address '\(shown)' for \(name) (expected an absolute socket path, "
                    + "127.0.0.1:PORT, [::1]:PORT or localhost:PORT)"
            }
            configuration.ofrepListenAddress = address
        case .tokenFile:
            if let message = pathProblem(value, name: name) { return message }
            configuration.ofrepTokenFile = resolved(value, relativeTo: origin)
        case .connectionLimit:
            guard let number = positiveInteger(value) else { return positiveIntegerMessage(shown, name) }
            configuration.ofrepConnectionLimit = number
        case .idleTimeout:
            return setDuration(value, name: name, allowingZero: false, at: \.ofrepIdleTimeout, in: &configuration)
        case .requestRate:
            guard let number = Int(value), number >= 0, number <= maximumInteger else {
                return "invalid number '\(shown)' for \(name) (expected 0 or a positive integer of at most "
                    + "\(maximumInteger))"
            }
            configuration.ofrepRequestRate = number
        case .allowedOrigins:
            let (origins, refused) = words(value, valid: isWebOrigin)
            if let refused {
                return "invalid origin\(refused.plural) \(refused.list) for \(name) (expected exact origins "
                    + "such as http://127.0.0.1:8080: a scheme http or https, a host and an optional port; no "
                    + "wildcard, path or trailing slash)"
            }
            configuration.ofrepAllowedOrigins = origins
        case .bus:
            guard value == "no" || MessageBus(rawValue: value) != nil else {
                return "invalid bus '\(shown)' for \(name) (expected system, session or no)"
            }
            configuration.bus = MessageBus(rawValue: value)
        case .busName:
            guard isBusName(value) else {
                return "invalid bus name '\(shown)' for \(name) (expected a well-known D-Bus name such as "
                    + "io.github.pwflagsd.Flags1: two or more elements of letters, digits, _ and -, separated by "
                    + "dots, none starting with a digit, at most 255 characters)"
            }
            configuration.busName = value
        case .varlinkSocketPath:
            if let message = socketPathProblem(value, shown: shown, name: name) { return message }
            configuration.varlinkSocketPath = value
        case .otlpEndpoint:
            if case .failure(let problem) = CollectorAddress.parse(value) {
                return "invalid collector address '\(shown)' for \(name) (\(problem))"
            }
            configuration.otlpEndpoint = value
        case .exportUserId:
            guard let export = UserIdExport(rawValue: value) else {
                return "invalid value '\(shown)' for \(name) (expected no or hashed)"
            }
            configuration.exportUserId = export
        case .exportFlagValues:
            return setBoolean(value, name: name, at: \.exportFlagValues, in: &configuration)
        case .maxEvaluationRecords:
            guard let number = positiveInteger(value) else { return positiveIntegerMessage(shown, name) }
            configuration.maxEvaluationRecords = number
        }
        return nil
    }

    /// Why `value` cannot be a socket's path (relative, unusable, or too long for `sun_path`), or nil.
    private static func socketPathProblem(_ value: String, shown: String, name: String) -> String? {
        guard value.hasPrefix("/") else { return "invalid socket path '\(shown)' for \(name) (must be absolute)" }
        if let message = pathProblem(value, name: name) { return message }
        let bytes = value.utf8.count
        guard bytes <= maximumSocketPathBytes else {
            return "socket path '\(shown)' for \(name) is too long "
                + "(\(bytes) bytes, at most \(maximumSocketPathBytes) fit in sun_path)"
        }
        return nil
    }

    // MARK: Value checks

    private static func setDuration(
        _ value: String,
        name: String,
        allowingZero: Bool,
        at keyPath: WritableKeyPath<Configuration, Duration>,
        in configuration: inout Configuration
    ) -> String? {
        guard let duration = Duration(systemdTimeSpan: value) else {
            return "invalid duration '\(quoted(value))' for \(name)"
        }
        guard allowingZero || duration > .zero else {
            return "invalid duration '\(quoted(value))' for \(name) (must be greater than 0)"
        }
        guard duration <= maximumDuration else {
            return "invalid duration '\(quoted(value))' for \(name) (must be at most 10y)"
        }
        configuration[keyPath: keyPath] = duration
        return nil
    }

    private static func setBoolean(
        _ value: String, name: String, at keyPath: WritableKeyPath<Configuration, Bool>,
        in configuration: inout Configuration
    ) -> String? {
        guard let flag = boolean(value) else {
            return "invalid boolean '\(quoted(value))' for \(name) (expected yes/no, true/false, on/off, 1/0)"
        }
        configuration[keyPath: keyPath] = flag
        return nil
    }

    /// systemd's boolean spellings (`parse_boolean`), case-insensitive.
    static func boolean(_ value: String) -> Bool? {
        switch value.lowercased() {
        case "yes", "true", "on", "1": true
        case "no", "false", "off", "0": false
        default: nil
        }
    }

    /// The longest duration any key takes (10 years): every timer, deadline and conversion to nanoseconds
    /// holds it without overflow, so a value `--check-config` accepts never traps at run time.
    static let maximumDuration = Duration.seconds(10 * 31_557_600)

    /// The largest count or size any key takes (2^31 - 1): sums and products of limits stay far from overflow.
    static let maximumInteger = Int(Int32.max)

    private static func positiveInteger(_ value: String) -> Int? {
        guard let number = Int(value), number > 0, number <= maximumInteger else { return nil }
        return number
    }

    private static func positiveIntegerMessage(_ shown: String, _ name: String) -> String {
        "invalid number '\(shown)' for \(name) (expected a positive integer of at most \(maximumInteger))"
    }

    /// An octal permission mode such as `0660` or `660`, at most `0777`.
    private static func octalMode(_ value: String) -> UInt32? {
        var mode: UInt32 = 0
        for scalar in value.unicodeScalars {
            guard ("0"..."7").contains(scalar) else { return nil }
            mode = mode * 8 + (scalar.value - 48)
            guard mode <= 0o777 else { return nil }
        }
        return mode
    }

    /// Paths may hold almost anything, but a control character is surely a mistake, and NUL cannot reach open(2).
    private static func pathProblem(_ value: String, name: String) -> String? {
        guard containsControlCharacter(value) else { return nil }
        return "invalid path '\(quoted(value))' for \(name) (contains a control character)"
    }

    /// Ids travel in JSON and log lines; a control character there is a mistake.
    private static func identifierProblem(_ value: String, name: String) -> String? {
        guard containsControlCharacter(value) else { return nil }
        return "invalid value '\(quoted(value))' for \(name) (contains a control character)"
    }

    private static func containsControlCharacter(_ value: String) -> Bool {
        value.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// A relative path taken as relative to the directory of the file that named it, as in `config/demo.conf`.
    static func resolved(_ path: String, relativeTo origin: ConfigurationOrigin) -> String {
        guard !path.hasPrefix("/"), origin != .commandLine, let slash = origin.file.lastIndex(of: "/") else {
            return path
        }
        let directory = origin.file[..<slash]
        return directory.isEmpty ? "/" + path : directory + "/" + path
    }

    /// The space- or tab-separated words of a list value, and those `valid` refuses (quoted, joined for a message,
    /// with the plural ending), or nil when it refuses none.
    private static func words(
        _ value: String, valid: (String) -> Bool
    ) -> (words: [String], refused: (list: String, plural: String)?) {
        let words = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        let invalid = words.filter { !valid($0) }
        guard !invalid.isEmpty else { return (words, nil) }
        return (words, (invalid.map { "'\(quoted($0))'" }.joined(separator: ", "), invalid.count == 1 ? "" : "s"))
    }
}
