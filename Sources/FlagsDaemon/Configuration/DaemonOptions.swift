import FlagsCore

/// pwflagsd's command line: what to do, which configuration file, and the keys it overrides.
public struct DaemonOptions: Sendable, Equatable {
    /// What the invocation asks for.
    public enum Action: Sendable, Equatable {
        /// Run the daemon.
        case run
        /// `--check-config`: print the effective configuration and exit 0, or every problem and exit 1.
        case checkConfig
        /// `--help`: print `usage` and exit 0.
        case help
        /// `--version`: print the version and exit 0.
        case version
    }

    public var action: Action
    /// `--config PATH`; nil means `Configuration.defaultConfigPath`, read only if it exists.
    public var configPath: String?
    public var overrides: CommandLineOverrides

    init(action: Action = .run, configPath: String? = nil, overrides: CommandLineOverrides = .init()) {
        self.action = action
        self.configPath = configPath
        self.overrides = overrides
    }

    /// The `--help` text.
    public static let usage = """
        Usage: pwflagsd [OPTIONS]

        Serves Pushwoosh feature flags to local programs over a Unix domain socket.

        Options:
          --config PATH       Read PATH, then PATH.d/*.conf in lexical order
                              (default: \(Configuration.defaultConfigPath), if it exists)
          --socket PATH       Create the socket at PATH (overrides SocketPath=;
                              unused when systemd passes the socket)
          --state-dir PATH    Keep the flag cache and the user id in PATH (overrides StateDirectory=)
          --log-level LEVEL   debug, info, notice, warning or err (overrides LogLevel=)
          --bus BUS           system, session or no (overrides [DBus] Bus=)
          --bus-name NAME     Own NAME on the bus (overrides [DBus] Name=; pwflagsd@NAME.service
                              passes io.github.pwflagsd.Flags1.NAME)
          --check-config      Print the effective configuration and exit 0,
                              or print every problem and exit 1
          -h, --help          Print this help and exit
          --version           Print the version and exit

        Options that take a value also accept --option=VALUE.

        """

    /// Parses the arguments after the program name (`CommandLine.arguments.dropFirst()`).
    ///
    /// A later option wins over an earlier one. `--help` and `--version` stop the parsing where they stand, so
    /// `pwflagsd --help --bogus` still prints the help. Values cannot be empty, and a value that looks like an
    /// option is taken as a missing value, since a path starting with `--` is far more likely a slip.
    public static func parse(_ arguments: some Sequence<String>) -> Result<DaemonOptions, DaemonUsageError> {
        var options = DaemonOptions()
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            let name: String
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            } else {
                name = argument
            }

            func value() -> Result<String, DaemonUsageError> {
                guard let text = inlineValue ?? iterator.next(), !(inlineValue == nil && text.hasPrefix("--")) else {
                    return .failure(.missingValue(option: name))
                }
                guard !text.isEmpty else {
                    return .failure(.emptyValue(option: name))
                }
                return .success(text)
            }
            func flag(_ action: Action) -> Result<Void, DaemonUsageError> {
                guard inlineValue == nil else { return .failure(.unexpectedValue(option: name)) }
                options.action = action
                return .success(())
            }

            let outcome: Result<Void, DaemonUsageError>
            switch name {
            case "--config": outcome = value().map { options.configPath = $0 }
            case "--socket": outcome = value().map { options.overrides.socketPath = $0 }
            case "--state-dir": outcome = value().map { options.overrides.stateDirectory = $0 }
            case "--log-level": outcome = value().map { options.overrides.logLevel = $0 }
            case "--bus": outcome = value().map { options.overrides.bus = $0 }
            case "--bus-name": outcome = value().map { options.overrides.busName = $0 }
            case "--check-config": outcome = flag(.checkConfig)
            case "--help", "-h":
                outcome = flag(.help)
                if case .success = outcome { return .success(options) }
            case "--version":
                outcome = flag(.version)
                if case .success = outcome { return .success(options) }
            default:
                outcome = .failure(argument.hasPrefix("-") ? .unknownOption(name) : .unexpectedArgument(argument))
            }
            if case .failure(let error) = outcome { return .failure(error) }
        }
        return .success(options)
    }
}
