public import FlagsCore
import UnixIO

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads the configuration from its files and the command line, in the order of docs/configuration.md
/// section, reporting every problem.
///
/// The order: the defaults; the main file (`--config PATH`, else `/etc/pwflagsd/pwflagsd.conf` when it exists);
/// every `*.conf` in `PATH.d/` in lexical byte order (hidden files and directories skipped, a missing `.d`
/// directory is fine); then `--socket`, `--state-dir` and `--log-level`. Problems from all of them are
/// collected, so `--check-config` shows them all at once.
public enum ConfigurationLoader {
    /// Files larger than this are refused: a configuration is a few kilobytes, and a path to `/dev/zero` or a
    /// huge log must not make the daemon read without end.
    static let maximumFileBytes = 1 << 20

    /// Loads the configuration; the failure holds every problem (file and line, or `command line`).
    ///
    /// The result is a `Result` rather than a throw so that callers handle both startup (print and exit) and
    /// reload (log and keep the running configuration) without a do/catch around a typed error.
    ///
    /// - Parameters:
    ///   - configPath: `--config`; nil reads `Configuration.defaultConfigPath` only if it exists. An explicit
    ///     path that cannot be read is a problem.
    ///   - overrides: The command line's overrides, checked like file values.
    ///   - environment: The process environment. Loading does not resolve environment defaults: the result keeps
    ///     them nil, as `Configuration` documents, for `resolvedStateDirectory(environment:)` and
    ///     `resolvedAPITokenFile(environment:)` to resolve; the parameter keeps callers passing one environment
    ///     everywhere, so that tests stay hermetic if loading ever needs it.
    public static func load(
        configPath: String?,
        overrides: CommandLineOverrides,
        environment: [String: String]
    ) -> Result<Configuration, ConfigurationErrors> {
        load(
            configPath: configPath,
            defaultConfigPath: Configuration.defaultConfigPath,
            overrides: overrides,
            environment: environment
        )
    }

    /// `load(configPath:overrides:environment:)` with the default path as a parameter, for hermetic tests.
    static func load(
        configPath: String?,
        defaultConfigPath: String,
        overrides: CommandLineOverrides,
        environment: [String: String]
    ) -> Result<Configuration, ConfigurationErrors> {
        let (parser, problems) = read(
            configPath: configPath, defaultConfigPath: defaultConfigPath, overrides: overrides)
        switch parser.finish() {
        case .success(let configuration):
            return problems.isEmpty ? .success(configuration) : .failure(ConfigurationErrors(problems))
        case .failure(let errors):
            // Unreadable files first: they often explain the rest.
            return .failure(ConfigurationErrors(problems + errors.problems))
        }
    }

    /// Reads the files and the command line into a parser (not finished), with the problems of files that could
    /// not be read.
    static func read(
        configPath: String?,
        defaultConfigPath: String,
        overrides: CommandLineOverrides
    ) -> (parser: ConfigurationParser, unreadable: [ConfigurationProblem]) {
        var parser = ConfigurationParser()
        var problems: [ConfigurationProblem] = []

        let mainPath = configPath ?? defaultConfigPath
        switch readText(atPath: mainPath) {
        case .success(let text):
            parser.parse(text: text, file: mainPath)
        case .failure(let error):
            // Without --config the default file is optional; any other failure to read it is still a problem.
            if !(configPath == nil && error.code == ENOENT) {
                problems.append(ConfigurationProblem(file: mainPath, line: 0, message: error.message))
            }
        }

        let dropInDirectory = mainPath + ".d"
        switch dropInFiles(in: dropInDirectory) {
        case .success(let names):
            for name in names {
                let path = dropInDirectory + "/" + name
                switch readText(atPath: path) {
                case .success(let text): parser.parse(text: text, file: path)
                case .failure(let error):
                    problems.append(ConfigurationProblem(file: path, line: 0, message: error.message))
                }
            }
        case .failure(let error):
            problems.append(ConfigurationProblem(file: dropInDirectory, line: 0, message: error.message))
        }

        let options: [(ConfigurationKey, String?, String)] = [
            (.socketPath, overrides.socketPath, "--socket"),
            (.stateDirectory, overrides.stateDirectory, "--state-dir"),
            (.logLevel, overrides.logLevel, "--log-level"),
            (.bus, overrides.bus, "--bus"),
            (.busName, overrides.busName, "--bus-name"),
        ]
        for (key, value, option) in options {
            guard let value else { continue }
            guard !value.isEmpty else {
                // In a file `Key=` resets; on the command line an empty value is a slip, not a request.
                problems.append(ConfigurationProblem(at: .commandLine, "empty value for \(option)"))
                continue
            }
            parser.assign(key, value: value, at: .commandLine, name: option)
        }
        return (parser, problems)
    }

    /// The effective configuration as `--check-config` prints it: environment defaults resolved, token masked.
    /// `unitCredential`: as in `apiTokenStatus`.
    public static func renderEffective(
        _ configuration: Configuration, environment: [String: String], unitCredential: UnitCredential? = nil
    ) -> String {
        configuration.rendered(
            environment: environment,
            apiToken: apiTokenStatus(of: configuration, environment: environment, unitCredential: unitCredential),
            unitCredential: unitCredential,
            fileExists: fileExists
        )
    }

    // MARK: Files

    /// Why a file could not be read: the errno, and a message for the problem list.
    struct ReadError: Error {
        var code: Int32
        var reason: String
        var message: String { "cannot read: \(reason)" }

        init(code: Int32) {
            self.code = code
            self.reason = String(cString: strerror(code))
        }

        init(code: Int32, reason: String) {
            self.code = code
            self.reason = reason
        }
    }

    static func fileExists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    static func readText(atPath path: String) -> Result<String, ReadError> {
        readBytes(atPath: path).flatMap { bytes in
            guard let text = String(validating: bytes, as: UTF8.self) else {
                return .failure(ReadError(code: EILSEQ, reason: "not valid UTF-8"))
            }
            return .success(text)
        }
    }

    static func readBytes(atPath path: String) -> Result<[UInt8], ReadError> {
        do {
            return .success(try FileReading.contents(ofPath: path, limit: maximumFileBytes))
        } catch  where error.errno == EFBIG {
            return .failure(ReadError(code: EFBIG, reason: "larger than \(maximumFileBytes) bytes"))
        } catch {
            return .failure(ReadError(code: error.errno))
        }
    }

    /// The names of the drop-ins in `directory`, in lexical byte order; none when the directory does not exist.
    static func dropInFiles(in directory: String) -> Result<[String], ReadError> {
        guard let stream = opendir(directory) else {
            return errno == ENOENT
                ? .success([]) : .failure(ReadError(code: errno, reason: String(cString: strerror(errno))))
        }
        defer { closedir(stream) }

        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            // systemd skips hidden files too; editors and package managers leave them behind.
            guard name.hasSuffix(".conf"), !name.hasPrefix(".") else { continue }
            var status = stat()
            if stat(directory + "/" + name, &status) == 0, status.st_mode & S_IFMT == S_IFDIR { continue }
            names.append(name)
        }
        // Byte order, not String's Unicode order, so that the order matches `ls` under LC_ALL=C and systemd.
        return .success(names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }
}
