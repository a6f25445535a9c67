import FlagsCore
import FlagsDaemon
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Parses the options, loads the configuration, runs the daemon; exit 0 at a clean stop, 1 when it cannot
/// start, 2 on a usage error.
func main() async -> Int32 {
    let environment = ProcessInfo.processInfo.environment
    let options: DaemonOptions
    switch DaemonOptions.parse(CommandLine.arguments.dropFirst()) {
    case .success(let parsed): options = parsed
    case .failure(let error):
        FileHandle.standardError.write(Data("pwflagsd: \(error.message)\n\(DaemonOptions.usage)\n".utf8))
        return 2
    }
    switch options.action {
    case .help:
        print(DaemonOptions.usage)
        return 0
    case .version:
        print("pwflagsd \(PWFlagsVersion.current)")
        return 0
    case .run, .checkConfig:
        break
    }
    let configuration: Configuration
    switch ConfigurationLoader.load(
        configPath: options.configPath, overrides: options.overrides, environment: environment)
    {
    case .success(let loaded): configuration = loaded
    case .failure(let errors):
        FileHandle.standardError.write(Data("pwflagsd: invalid configuration:\n\(errors.description)\n".utf8))
        return 1
    }
    if options.action == .checkConfig {
        // From a shell there is no $CREDENTIALS_DIRECTORY: the token is read where the service's unit loads it.
        let unitCredential = UnitCredentialLookup().credential(forConfigPath: options.configPath)
        print(
            ConfigurationLoader.renderEffective(
                configuration, environment: environment, unitCredential: unitCredential),
            terminator: "")
        return 0
    }
    let logger = Logger(level: configuration.logLevel, environment: environment)
    // Before the daemon reads the API token.
    for problem in CoreDumps.disable() { logger.warning("core files may carry the API token: \(problem)") }
    do {
        let daemon = Daemon(configuration: configuration, environment: environment, logger: logger) {
            ConfigurationLoader.load(
                configPath: options.configPath, overrides: options.overrides, environment: environment)
        }
        try await daemon.run()
        return 0
    } catch {
        logger.error("cannot start: \(error)")
        return 1
    }
}

exit(await main())
