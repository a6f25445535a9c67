extension Configuration {
    /// The effective configuration in the file format, every key in its section, for `pwflagsd --check-config`.
    ///
    /// Durations print in systemd's spelling and the socket mode in octal. Keys set from the environment
    /// (`StateDirectory` from `$STATE_DIRECTORY` or its default, `APITokenFile` from `$CREDENTIALS_DIRECTORY`)
    /// print resolved, after a comment saying where the value came from. Keys that stay unset print commented
    /// out with what applies instead, such as `#HWID= (derived from the machine id)`, so feeding the text back to
    /// the parser gives the same effective configuration.
    ///
    /// Secrets stay out: the configuration holds only the token's path, and `apiToken`, when given, adds a line
    /// such as `# API token (/run/credentials/pwflagsd.service/pushwoosh-api-token): set (masked, 32 bytes)`.
    ///
    /// - Parameters:
    ///   - environment: The daemon's environment, for `$STATE_DIRECTORY` and `$CREDENTIALS_DIRECTORY`.
    ///   - apiToken: What the caller found at the token file, if it looked.
    ///   - unitCredential: Where the service's unit loads the token credential from; applies only when
    ///     `APITokenFile` is unset and `$CREDENTIALS_DIRECTORY` is too (a shell, not the service).
    ///   - fileExists: Whether a path exists; decides whether the credential file applies. Keeps this pure.
    public func rendered(
        environment: [String: String],
        apiToken: APITokenStatus? = nil,
        unitCredential: UnitCredential? = nil,
        fileExists: (String) -> Bool
    ) -> String {
        var lines = [
            "# pwflagsd effective configuration.",
            "# Commented keys are unset; the note says what applies instead.",
        ]
        for section in ConfigurationSection.allCases {
            lines.append("")
            lines.append("[\(section.rawValue)]")
            for key in section.keys {
                lines += renderedLines(
                    for: key, environment: environment, apiToken: apiToken, unitCredential: unitCredential,
                    fileExists: fileExists)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The value of a key as the file would spell it, or nil when the key is unset.
    public func renderedValue(of key: ConfigurationKey) -> String? {
        switch key {
        case .applicationCode: applicationCode
        case .serverURL: serverURL
        case .apiTokenFile: apiTokenFile
        case .hwid: hwid
        case .userID: userID
        case .deviceType: deviceType.map(String.init)
        case .requestTimeout: requestTimeout.systemdTimeSpan
        case .caFile: caFile
        case .cacheMaxAge: cacheMaxAge.systemdTimeSpan
        case .refreshInterval: refreshInterval.systemdTimeSpan
        case .sessionTimeout: sessionTimeout.systemdTimeSpan
        case .sessionMaxAge: sessionMaxAge.systemdTimeSpan
        case .refreshThrottle: refreshThrottle.systemdTimeSpan
        case .disableThrottle: disableThrottle ? "yes" : "no"
        case .lifecycle: lifecycle.rawValue
        case .localFlagsFile: localFlagsFile
        case .seedFile: seedFile
        case .retryBackoff: retryBackoff.systemdTimeSpan
        case .refreshSpread: refreshSpread.systemdTimeSpan
        case .sessionStartDelay: sessionStartDelay.systemdTimeSpan
        case .socketPath: socketPath
        case .socketMode: Self.octal(socketMode)
        case .stateDirectory: stateDirectory
        case .controlGroups: controlGroups.joined(separator: " ")
        case .maxConnections: String(maxConnections)
        case .maxLineBytes: String(maxLineBytes)
        case .maxPendingBytes: String(maxPendingBytes)
        case .maxSubscriptions: String(maxSubscriptions)
        case .maxListenKeys: String(maxListenKeys)
        case .idleConnectionTimeout: idleConnectionTimeout.systemdTimeSpan
        case .logLevel: logLevel.rawValue
        case .metricsFile: metricsFile
        case .metricsInterval: metricsInterval.systemdTimeSpan
        case .listenAddress: ofrepListenAddress?.description
        case .tokenFile: ofrepTokenFile
        case .connectionLimit: String(ofrepConnectionLimit)
        case .idleTimeout: ofrepIdleTimeout.systemdTimeSpan
        case .requestRate: String(ofrepRequestRate)
        case .allowedOrigins: ofrepAllowedOrigins.isEmpty ? nil : ofrepAllowedOrigins.joined(separator: " ")
        case .bus: bus?.rawValue ?? "no"
        case .busName: busName
        case .varlinkSocketPath: varlinkSocketPath
        case .otlpEndpoint: otlpEndpoint
        case .exportUserId: exportUserId.rawValue
        case .exportFlagValues: exportFlagValues ? "yes" : "no"
        case .maxEvaluationRecords: String(maxEvaluationRecords)
        }
    }

    private func renderedLines(
        for key: ConfigurationKey,
        environment: [String: String],
        apiToken: APITokenStatus?,
        unitCredential: UnitCredential?,
        fileExists: (String) -> Bool
    ) -> [String] {
        let name = key.name
        var lines: [String]
        if let value = renderedValue(of: key) {
            lines = ["\(name)=\(value)"]
        } else {
            switch key {
            case .stateDirectory:
                let resolved = resolvedStateDirectory(environment: environment)
                let source = environment["STATE_DIRECTORY"]?.isEmpty == false ? "from $STATE_DIRECTORY" : "default"
                lines = ["# \(name): \(source)", "\(name)=\(resolved)"]
            case .apiTokenFile:
                if let credential = resolvedAPITokenFile(environment: environment, fileExists: fileExists) {
                    lines = ["# \(name): from $CREDENTIALS_DIRECTORY", "\(name)=\(credential)"]
                } else if let credential = Self.credentialTokenPath(environment: environment) {
                    lines = ["#\(name)= (none: \(credential) does not exist)"]
                } else if let unitCredential {
                    lines = [
                        "#\(name)= (unset: \(unitCredential.unit) hands the daemon \(unitCredential.path) as its credential)"
                    ]
                } else {
                    lines = ["#\(name)= (none: $CREDENTIALS_DIRECTORY is unset)"]
                }
            default:
                lines = ["#\(name)= (\(unsetNote(for: key)))"]
            }
        }
        if key == .apiTokenFile, let apiToken {
            let path =
                resolvedAPITokenFile(environment: environment, fileExists: fileExists)
                ?? (Self.credentialTokenPath(environment: environment) == nil ? unitCredential?.path : nil)
            // The file it read, so that a wrong path shows: `# API token (/etc/pwflagsd/api-token): not set`.
            lines.append("# API token\(path.map { " (\($0))" } ?? ""): \(Self.describe(apiToken))")
        }
        return lines
    }

    /// What applies when an optional key is unset.
    private func unsetNote(for key: ConfigurationKey) -> String {
        switch key {
        case .serverURL: defaultServerURL.map { "default: \($0)" } ?? "unused: ApplicationCode is empty"
        case .hwid: "derived from the machine id"
        case .userID: "the HWID, until a client sets one"
        case .deviceType: "unset: device_type is left out"
        case .caFile: "unset: the system store alone"
        case .localFlagsFile: usesLocalSource ? "unset: no local flags to serve" : "unset"
        case .seedFile: usesLocalSource ? "unused: ApplicationCode is empty" : "unset: no flags before the first fetch"
        case .metricsFile: "unset: no metrics file is written"
        case .listenAddress: "unset: OFREP is off"
        case .varlinkSocketPath: "unset: Varlink is off"
        case .otlpEndpoint: "unset: $OTEL_EXPORTER_OTLP_ENDPOINT, else no telemetry"
        case .tokenFile: "unset: no token asked of Unix socket clients"
        case .allowedOrigins: "empty: no browser page may read the listener"
        default: "unset"
        }
    }

    private static func describe(_ status: APITokenStatus) -> String {
        switch status {
        case .present(let byteCount): "set (masked, \(byteCount) bytes)"
        case .missing: "not set"
        case .unreadable(let reason): "unreadable (\(reason))"
        }
    }

    /// `0660`: the leading zero says octal, the way chmod and systemd's `SocketMode=` write modes.
    private static func octal(_ mode: UInt32) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
