import TestSupport
import Testing

@testable import FlagsDaemon

@Suite(.hangLimit) struct DaemonOptionsTests {
    @Test func noArgumentsRunsWithTheDefaultFile() throws {
        let options = try DaemonOptions.parse([]).get()
        #expect(options == DaemonOptions(action: .run, configPath: nil, overrides: CommandLineOverrides()))
    }

    @Test func readsEveryOptionInBothSpellings() throws {
        let separate = try DaemonOptions.parse([
            "--config", "/etc/x.conf", "--socket", "/run/x.sock", "--state-dir", "/var/x", "--log-level", "debug",
            "--check-config",
        ]).get()
        let joined = try DaemonOptions.parse([
            "--config=/etc/x.conf", "--socket=/run/x.sock", "--state-dir=/var/x", "--log-level=debug", "--check-config",
        ]).get()
        let expected = DaemonOptions(
            action: .checkConfig,
            configPath: "/etc/x.conf",
            overrides: CommandLineOverrides(socketPath: "/run/x.sock", stateDirectory: "/var/x", logLevel: "debug")
        )
        #expect(separate == expected)
        #expect(joined == expected)
    }

    @Test func readsTheBusOptions() throws {
        let options = try DaemonOptions.parse(["--bus", "session", "--bus-name=io.github.pwflagsd.Flags1.kiosk"]).get()
        #expect(options.overrides == CommandLineOverrides(bus: "session", busName: "io.github.pwflagsd.Flags1.kiosk"))
        #expect(DaemonOptions.usage.contains("--bus BUS"))
        #expect(DaemonOptions.usage.contains("--bus-name NAME"))
    }

    @Test func laterOptionWins() throws {
        #expect(try DaemonOptions.parse(["--config", "/a", "--config=/b"]).get().configPath == "/b")
    }

    @Test func helpAndVersionStopTheParsing() throws {
        #expect(try DaemonOptions.parse(["--help", "--bogus"]).get().action == .help)
        #expect(try DaemonOptions.parse(["-h"]).get().action == .help)
        #expect(try DaemonOptions.parse(["--socket", "/s", "--version"]).get().action == .version)
    }

    @Test func logLevelIsLeftForTheLoaderToCheck() throws {
        #expect(try DaemonOptions.parse(["--log-level", "loud"]).get().overrides.logLevel == "loud")
    }

    @Test(arguments: [
        (["--bogus"], DaemonUsageError.unknownOption("--bogus"), "unknown option '--bogus'"),
        (["--bogus=1"], .unknownOption("--bogus"), "unknown option '--bogus'"),
        (["-x"], .unknownOption("-x"), "unknown option '-x'"),
        (["stray"], .unexpectedArgument("stray"), "unexpected argument 'stray'"),
        (["--config"], .missingValue(option: "--config"), "option '--config' needs a value"),
        (["--config", "--check-config"], .missingValue(option: "--config"), "option '--config' needs a value"),
        (["--socket="], .emptyValue(option: "--socket"), "option '--socket' needs a non-empty value"),
        (["--state-dir", ""], .emptyValue(option: "--state-dir"), "option '--state-dir' needs a non-empty value"),
        (["--check-config=yes"], .unexpectedValue(option: "--check-config"), "option '--check-config' takes no value"),
        (["--help=me"], .unexpectedValue(option: "--help"), "option '--help' takes no value"),
    ])
    func rejectsBadCommandLines(arguments: [String], error: DaemonUsageError, message: String) {
        #expect(DaemonOptions.parse(arguments) == .failure(error))
        #expect(error.message == message)
        #expect(error.description == message)
    }

    @Test func aMissingAndAnEmptyValueShareACode() {
        #expect(DaemonUsageError.missingValue(option: "--config").code == .missingValue)
        #expect(DaemonUsageError.emptyValue(option: "--config").code == .missingValue)
        #expect(DaemonUsageError.unknownOption("-x").code != DaemonUsageError.unexpectedArgument("x").code)
    }

    @Test func usageMentionsEveryOption() {
        for option in ["--config", "--socket", "--state-dir", "--log-level", "--check-config", "--help", "--version"] {
            #expect(DaemonOptions.usage.contains(option))
        }
    }
}
