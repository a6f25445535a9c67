import FlagsCore
import Foundation
import TestSupport
import Testing

/// The CLI's answers to a person's slips: a typo'd option or command, an empty or wrong socket path, and help
/// texts that agree with each other and speak in words.
@Suite(.hangLimit) struct CLIUsageTests {
    @Test(arguments: [["--sockt", "/x", "get", "a"], ["--sockt", "get", "k"], ["--sockt=/x", "list"]])
    func aTypoedGlobalOptionIsNamedNotMisread(arguments: [String]) throws {
        let outcome = try CLI.run(arguments)
        #expect(outcome.status == 2, "\(outcome)")
        #expect(outcome.stderr.contains("unknown option --sockt (did you mean --socket?)"), "\(outcome)")
        #expect(outcome.stdout.isEmpty)
    }

    @Test func aTypoedOptionAfterTheCommandGetsASuggestion() throws {
        let outcome = try CLI.run(["get", "k", "--sockt", "/x"])
        #expect(outcome.status == 2, "\(outcome)")
        #expect(outcome.stderr.contains("get has no option --sockt (did you mean --socket?)"), "\(outcome)")
        let typo = try CLI.run(["is-enabled", "k", "--defualt", "true"])
        #expect(typo.stderr.contains("(did you mean --default?)"), "\(typo)")
    }

    @Test(arguments: [["help", "gte"], ["gte"], ["gte", "--help"], ["--help", "gte"]])
    func aTypoedCommandIsAUsageErrorWithASuggestion(arguments: [String]) throws {
        let outcome = try CLI.run(["--socket", "/nonexistent/pwflags-test.sock"] + arguments)
        #expect(outcome.status == 2, "\(outcome)")
        #expect(outcome.stderr.contains("unknown command 'gte' (did you mean get?)"), "\(outcome)")
        #expect(outcome.stdout.isEmpty, "no general help on stdout with exit 0: \(outcome)")
    }

    @Test func anUnrelatedWordGetsNoSuggestion() throws {
        let outcome = try CLI.run(["frobnicate"])
        #expect(outcome.status == 2, "\(outcome)")
        #expect(outcome.stderr.contains("unknown command 'frobnicate'; see pwflags --help"), "\(outcome)")
    }

    @Test(arguments: [["--socket", ""], ["--socket="]])
    func anEmptySocketIsRefusedNotTheEnvironmentsDaemon(socket: [String]) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        // A script passing an unset variable must not read the daemon $PWFLAGS_SOCKET names.
        let outcome = try CLI.run(socket + ["get", "new_checkout"], environment: ["PWFLAGS_SOCKET": daemon.socketPath])
        #expect(outcome.status == 2, "\(outcome)")
        #expect(outcome.stderr.contains("--socket needs a path, not an empty string"), "\(outcome)")
        #expect(outcome.stdout.isEmpty)
    }

    @Test func aDirectoryOrARegularFileIsNotASocket() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("plain", "x")
        for (path, reason) in [
            (directory.path, "not a socket but a directory"), (directory.file("plain"), "not a socket"),
        ] {
            let outcome = try CLI.run(["--socket", path, "get", "a"])
            #expect(outcome.status == 69, "\(outcome)")
            #expect(outcome.stderr.contains("cannot reach pwflagsd at \(path): \(reason)"), "\(outcome)")
            #expect(!outcome.stderr.contains("Connection refused"), "\(outcome)")
        }
    }

    @Test func reloadSaysTheSameWhoEverywhere() throws {
        let general = try CLI.run(["--help"]).stdout
        let reload = try CLI.run(["reload", "--help"]).stdout
        #expect(!general.contains("root only"), "\(general)")
        #expect(
            general.contains(
                "reload                               re-read the configuration (root and the daemon's user)"))
        #expect(reload.contains("Only root and the daemon's own user may reload."))
    }

    @Test func impressionHelpListsEveryOutcomeItPrints() throws {
        let help = try CLI.run(["impression", "--help"]).stdout
        for outcome in ["sent", "duplicate", "noFlag", "failed", "logged", "overridden"] {
            #expect(help.contains(outcome), "\(outcome) is missing from: \(help)")
        }
    }

    /// A rule number means nothing to a reader of the help who has not read docs/behaviour.md: the general list
    /// names none, and a command's text says the rule in words with the number in brackets at most.
    @Test func helpTextsSayRulesInWords() throws {
        let general = try CLI.run(["--help"]).stdout
        #expect(general.firstMatch(of: /\bR[0-9]/) == nil, "\(general)")
        for command in ["get", "refresh", "set-user-id", "app-state", "push-registered", "impression", "explain"] {
            let text = try CLI.run([command, "--help"]).stdout
            for match in text.matches(of: /(.)R[0-9]+[a-z]?\b/) {
                #expect(match.output.1 == "(", "pwflags \(command) --help cites a rule outside brackets: \(text)")
            }
        }
    }

    /// docs/cli.md: `--json get` prints the `flag` of the protocol's `get` result alone, members sorted by name,
    /// and `null` for an absent flag.
    @Test func jsonGetPrintsTheProtocolsFlagObjectAsDocumented() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try RawClient(socketPath: daemon.socketPath)
        let flag = try #require(
            try client.request(#"{"id":1,"method":"get","params":{"key":"new_checkout"}}"#)?["result"]?["flag"])
        let outcome = try CLI.run(["--socket", daemon.socketPath, "--json", "get", "new_checkout"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stdout == flag.serialized() + "\n")
        #expect(outcome.stdout.hasPrefix(#"{"enabled":true,"key":"new_checkout","properties":{"#), "\(outcome)")
        let absent = try CLI.run(["--socket", daemon.socketPath, "--json", "get", "absent"])
        #expect(absent.status == 1 && absent.stdout == "null\n", "\(absent)")
    }
}
