import FlagsCore
import Foundation
import TestSupport
import Testing

@testable import FlagsDaemon

/// A fresh directory under the system's temporary directory, removed when the test ends.
private struct TemporaryDirectory: ~Copyable {
    let path: String

    init() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pwflagsd-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `text` at `name` (relative to the directory), creating parent directories; returns the full path.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let full = path + "/" + name
        let parent = (full as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        try text.write(toFile: full, atomically: true, encoding: .utf8)
        return full
    }
}

@Suite(.hangLimit) struct ConfigurationLoaderTests {
    private func problems(_ result: Result<Configuration, ConfigurationErrors>) -> [String] {
        guard case .failure(let errors) = result else { return [] }
        return errors.problems.map(\.description)
    }

    @Test func readsTheMainFileThenDropInsInLexicalOrder() throws {
        let directory = try TemporaryDirectory()
        let main = try directory.write(
            "pwflagsd.conf", "[Daemon]\nMaxConnections=1\nMaxSubscriptions=9\nLogLevel=debug\n")
        try directory.write("pwflagsd.conf.d/20-b.conf", "[Daemon]\nMaxConnections=20\n")
        try directory.write("pwflagsd.conf.d/10-a.conf", "[Daemon]\nMaxConnections=10\nLogLevel=\n")
        try directory.write("pwflagsd.conf.d/B-upper.conf", "[Daemon]\nMaxConnections=66\n")
        try directory.write("pwflagsd.conf.d/a-lower.conf", "[Daemon]\nMaxConnections=97\n")
        try directory.write("pwflagsd.conf.d/99-ignored.conf.disabled", "[Daemon]\nMaxConnections=1000\n")
        try directory.write("pwflagsd.conf.d/.hidden.conf", "[Daemon]\nMaxConnections=1001\n")
        try directory.write("pwflagsd.conf.d/dir.conf/inner.conf", "[Daemon]\nMaxConnections=1002\n")

        let configuration = try ConfigurationLoader.load(
            configPath: main, overrides: CommandLineOverrides(), environment: [:]
        ).get()
        // Byte order puts 10 < 20 < B < a, so the lowercase name comes last and wins.
        #expect(configuration.maxConnections == 97)
        #expect(configuration.maxSubscriptions == 9)
        #expect(configuration.logLevel == .info)
    }

    /// Problems come in reading order: the one between keys is where the later key was set, before a later file.
    @Test func laterDropInsWinAndProblemsNameTheirFile() throws {
        let directory = try TemporaryDirectory()
        let main = try directory.write("main.conf", "[Daemon]\nMaxPendingBytes=100000\n")
        try directory.write("main.conf.d/10-lines.conf", "[Daemon]\nMaxLineBytes=200000\n")
        try directory.write("main.conf.d/20-typo.conf", "[Daemon]\nLogLevl=debug\n")
        let result = ConfigurationLoader.load(configPath: main, overrides: CommandLineOverrides(), environment: [:])
        #expect(
            problems(result) == [
                "\(directory.path)/main.conf.d/10-lines.conf:2: MaxPendingBytes (100000) must be at least MaxLineBytes (200000)",
                "\(directory.path)/main.conf.d/20-typo.conf:2: unknown key 'LogLevl' in section [Daemon]",
            ])
    }

    @Test func commandLineOverridesWinOverFiles() throws {
        let directory = try TemporaryDirectory()
        let main = try directory.write(
            "pwflagsd.conf", "[Daemon]\nSocketPath=/run/a.sock\nStateDirectory=/var/a\nLogLevel=debug\n")
        try directory.write("pwflagsd.conf.d/50.conf", "[Daemon]\nSocketPath=/run/b.sock\n")
        let overrides = CommandLineOverrides(socketPath: "/tmp/c.sock", stateDirectory: "/tmp/state", logLevel: "err")
        let configuration = try ConfigurationLoader.load(configPath: main, overrides: overrides, environment: [:]).get()
        #expect(configuration.socketPath == "/tmp/c.sock")
        #expect(configuration.stateDirectory == "/tmp/state")
        #expect(configuration.logLevel == .err)
    }

    @Test func badCommandLineValuesAreProblemsFromTheCommandLine() {
        let overrides = CommandLineOverrides(socketPath: "relative.sock", stateDirectory: "", logLevel: "loud")
        let result = ConfigurationLoader.load(
            configPath: nil, defaultConfigPath: "/nonexistent/pwflagsd.conf", overrides: overrides, environment: [:])
        #expect(
            problems(result) == [
                "command line: empty value for --state-dir",
                "command line: invalid socket path 'relative.sock' for --socket (must be absolute)",
                "command line: invalid log level 'loud' for --log-level (expected debug, info, notice, warning or err)",
            ])
    }

    @Test func theBusAndItsNameComeFromTheFileOrTheCommandLine() throws {
        let directory = try TemporaryDirectory()
        let main = try directory.write("pwflagsd.conf", "[DBus]\nBus=no\nName=org.example.Flags\n")
        let fromFile = try ConfigurationLoader.load(
            configPath: main, overrides: CommandLineOverrides(), environment: [:]
        ).get()
        #expect(fromFile.bus == nil)
        #expect(fromFile.busName == "org.example.Flags")
        let overrides = CommandLineOverrides(bus: "session", busName: "io.github.pwflagsd.Flags1.kiosk")
        let fromOptions = try ConfigurationLoader.load(configPath: main, overrides: overrides, environment: [:]).get()
        #expect(fromOptions.bus == .session)
        #expect(fromOptions.busName == "io.github.pwflagsd.Flags1.kiosk")
        let defaults = try ConfigurationLoader.load(
            configPath: nil, defaultConfigPath: "/nonexistent/pwflagsd.conf", overrides: CommandLineOverrides(),
            environment: [:]
        ).get()
        #expect(defaults.bus == .system)
        #expect(defaults.busName == "io.github.pwflagsd.Flags1")
    }

    @Test func aBusNameThatIsNotOneIsAProblem() {
        for name in ["Flags1", "io.github.pwflagsd.Flags1.3rd-floor", "io..x", "io.github/x", ":1.2"] {
            let result = ConfigurationLoader.load(
                configPath: nil, defaultConfigPath: "/nonexistent/pwflagsd.conf",
                overrides: CommandLineOverrides(bus: "sytem", busName: name), environment: [:])
            #expect(problems(result).count == 2, "\(name): \(problems(result))")
            #expect(
                problems(result).first == "command line: invalid bus 'sytem' for --bus (expected system, session or no)"
            )
        }
    }

    @Test func missingExplicitFileIsAProblemButItsDropInsStillCount() throws {
        let directory = try TemporaryDirectory()
        try directory.write("absent.conf.d/10.conf", "[Daemon]\nBogus=1\n")
        let result = ConfigurationLoader.load(
            configPath: directory.path + "/absent.conf", overrides: CommandLineOverrides(), environment: [:])
        #expect(
            problems(result) == [
                "\(directory.path)/absent.conf: cannot read: No such file or directory",
                "\(directory.path)/absent.conf.d/10.conf:2: unknown key 'Bogus' in section [Daemon]",
            ])
    }

    @Test func missingDefaultFileIsFineButItsDropInsAreRead() throws {
        let directory = try TemporaryDirectory()
        try directory.write("pwflagsd.conf.d/10.conf", "[Daemon]\nMaxSubscriptions=5\n")
        let configuration = try ConfigurationLoader.load(
            configPath: nil,
            defaultConfigPath: directory.path + "/pwflagsd.conf",
            overrides: CommandLineOverrides(),
            environment: [:]
        ).get()
        #expect(configuration.maxSubscriptions == 5)

        let empty = try TemporaryDirectory()
        let defaults = ConfigurationLoader.load(
            configPath: nil, defaultConfigPath: empty.path + "/pwflagsd.conf", overrides: CommandLineOverrides(),
            environment: [:])
        #expect(defaults == .success(Configuration()))
    }

    @Test func missingDropInDirectoryIsFine() throws {
        let directory = try TemporaryDirectory()
        let main = try directory.write("only.conf", "[Pushwoosh]\nApplicationCode=ABCDE-12345\n")
        let configuration = try ConfigurationLoader.load(
            configPath: main, overrides: CommandLineOverrides(), environment: [:]
        ).get()
        #expect(configuration.applicationCode == "ABCDE-12345")
    }

    @Test func unreadableContentIsAProblem() throws {
        let directory = try TemporaryDirectory()
        let main = directory.path + "/binary.conf"
        try Data([0x5B, 0xFF, 0xFE, 0x5D]).write(to: URL(fileURLWithPath: main))
        try directory.write("dir.conf/placeholder", "")
        #expect(
            problems(ConfigurationLoader.load(configPath: main, overrides: CommandLineOverrides(), environment: [:]))
                == ["\(main): cannot read: not valid UTF-8"])
        let directoryPath = directory.path + "/dir.conf"
        #expect(
            problems(
                ConfigurationLoader.load(configPath: directoryPath, overrides: CommandLineOverrides(), environment: [:])
            ) == ["\(directoryPath): cannot read: Is a directory"])
    }

    @Test func relativeLocalFlagsFileResolvesAgainstItsConfigFile() throws {
        let directory = try TemporaryDirectory()
        let main = try directory.write("config/demo.conf", "[FeatureFlags]\nLocalFlagsFile=demo-flags.json\n")
        let configuration = try ConfigurationLoader.load(
            configPath: main, overrides: CommandLineOverrides(), environment: [:]
        ).get()
        #expect(configuration.localFlagsFile == directory.path + "/config/demo-flags.json")
    }

    @Test func apiTokenFileFallsBackToAnExistingCredential() throws {
        let directory = try TemporaryDirectory()
        let environment = ["CREDENTIALS_DIRECTORY": directory.path]
        #expect(Configuration().resolvedAPITokenFile(environment: environment) == nil)
        #expect(ConfigurationLoader.apiTokenStatus(of: Configuration(), environment: environment) == .missing)

        let token = try directory.write("pushwoosh-api-token", "secret-token-value\n")
        #expect(Configuration().resolvedAPITokenFile(environment: environment) == token)
        #expect(Configuration().resolvedAPITokenFile(environment: [:]) == nil)
        var configured = Configuration()
        configured.apiTokenFile = "/etc/pwflagsd/token"
        #expect(configured.resolvedAPITokenFile(environment: environment) == "/etc/pwflagsd/token")
        #expect(
            ConfigurationLoader.apiTokenStatus(of: configured, environment: environment)
                == .unreadable(reason: "No such file or directory"))
    }

    @Test("The API token is read bounded: a larger file is refused by name, its contents in no error or status")
    func anOversizedAPITokenFileIsRefused() throws {
        let directory = try TemporaryDirectory()
        let secret = "secret-token-value-"
        let text = String(repeating: secret, count: ConfigurationLoader.maximumAPITokenBytes / secret.count + 1)
        let path = try directory.write("pushwoosh-api-token", text)
        let result = ConfigurationLoader.readAPIToken(atPath: path)
        guard case .failure(let error) = result else {
            Issue.record("an oversized token file was read: \(result)")
            return
        }
        #expect(error.code == EFBIG)
        #expect(error.reason == "larger than 4096 bytes")
        #expect(!"\(error.message) \(error.reason)".contains("secret-token"))
        var configured = Configuration()
        configured.apiTokenFile = path
        let status = ConfigurationLoader.apiTokenStatus(of: configured, environment: [:])
        #expect(status == .unreadable(reason: "larger than 4096 bytes"))
        #expect(!ConfigurationLoader.renderEffective(configured, environment: [:]).contains("secret-token"))

        // At the bound itself, and with the line end an editor adds, the token is read as it is.
        let fitting = String(repeating: "t", count: ConfigurationLoader.maximumAPITokenBytes - 1) + "\n"
        let fits = try directory.write("fits", fitting)
        #expect(try ConfigurationLoader.readAPIToken(atPath: fits).get().count == 4095)
    }

    @Test func renderingMasksTheTokenAndResolvesTheEnvironment() throws {
        let directory = try TemporaryDirectory()
        try directory.write("pushwoosh-api-token", "secret-token-value\n")
        let environment = ["CREDENTIALS_DIRECTORY": directory.path, "STATE_DIRECTORY": "/var/lib/pwflagsd-test"]
        let text = ConfigurationLoader.renderEffective(Configuration(), environment: environment)
        #expect(!text.contains("secret-token-value"))
        #expect(
            text.contains(
                "\nAPITokenFile=\(directory.path)/pushwoosh-api-token\n"
                    + "# API token (\(directory.path)/pushwoosh-api-token): set (masked, 18 bytes)\n")
        )
        #expect(text.contains("\nStateDirectory=/var/lib/pwflagsd-test\n"))
    }

    @Test func stateDirectoryResolvesFromTheEnvironment() {
        #expect(Configuration().resolvedStateDirectory(environment: [:]) == "/var/lib/pwflagsd")
        #expect(Configuration().resolvedStateDirectory(environment: ["STATE_DIRECTORY": "/x:/y"]) == "/x")
    }
}
