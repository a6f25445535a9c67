public import FlagsCore

extension ConfigurationLoader {
    /// `load`, plus the problems the daemon would otherwise meet only when it starts, for `--check-config`,
    /// which promises every problem: an `[OFREP] TokenFile` that cannot be read or holds no token (the daemon
    /// then serves without OFREP and says so only in its log), reported where `TokenFile` was set and read as the
    /// daemon reads it (`OFREPListener.token`); and a `ServerURL` from which flags can never be fetched (the
    /// daemon then serves its cache and says why in `status.problem`, R16), reported where it was set; and an
    /// `OTEL_*` variable the telemetry cannot use, reported as `environment`.
    ///
    /// Not part of `load`: a daemon that starts or reloads with such a file keeps serving its socket without
    /// OFREP rather than refusing the whole configuration.
    public static func check(
        configPath: String?,
        overrides: CommandLineOverrides,
        environment: [String: String]
    ) -> Result<Configuration, ConfigurationErrors> {
        let (parser, unreadable) = read(
            configPath: configPath, defaultConfigPath: Configuration.defaultConfigPath, overrides: overrides)
        var problems = unreadable
        let configuration: Configuration
        switch parser.finish() {
        case .success(let finished): configuration = finished
        case .failure(let errors):
            problems += errors.problems
            configuration = parser.configuration
        }
        do {
            _ = try OFREPListener.token(configuration)
        } catch {
            let origin = parser.origins[.tokenFile] ?? ConfigurationOrigin(file: "defaults", line: 0)
            problems.append(ConfigurationProblem(at: origin, error.message))
        }
        if let path = configuration.seedFile, !configuration.usesLocalSource,
            case .failure(let reason) = SeedFile.read(path, applicationCode: configuration.applicationCode)
        {
            let origin = parser.origins[.seedFile] ?? ConfigurationOrigin(file: "defaults", line: 0)
            problems.append(ConfigurationProblem(at: origin, reason.description))
        }
        if let problem = ProviderStack.fetchProblem(configuration) {
            let origin =
                parser.origins[.serverURL] ?? parser.origins[.applicationCode]
                ?? ConfigurationOrigin(file: "defaults", line: 0)
            problems.append(ConfigurationProblem(at: origin, problem))
        }
        // The telemetry's variables: the daemon starts without what it cannot use, and says so only in its log.
        for problem in TelemetrySettings.resolve(configuration, environment: environment, instanceId: "").problems {
            problems.append(ConfigurationProblem(at: ConfigurationOrigin(file: "environment", line: 0), problem))
        }
        return problems.isEmpty ? .success(configuration) : .failure(ConfigurationErrors(problems))
    }
}
