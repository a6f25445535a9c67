import Foundation
import TestSupport
import Testing

/// The bash completion shipped in the package (`systemd/completion/pwflags`), run by bash itself with Debian's
/// bash-completion: commands as `pwflags --help` lists them, the keys of the running daemon, option values.
@Suite(.hangLimit) struct CompletionTests {
    static let completion = Repository.path("systemd/completion/pwflags")
    /// Runs the completion on the line in `$2`, as bash does for a Tab at its end, and prints the candidates.
    static let driver = """
        source /usr/share/bash-completion/bash_completion
        source "$1"
        COMP_LINE=$2
        COMP_POINT=${#COMP_LINE}
        read -ra COMP_WORDS <<<"$COMP_LINE"
        [[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMPREPLY=()
        _pwflags
        printf '%s\n' "${COMPREPLY[@]}"
        """

    /// The candidates bash would offer for a Tab at the end of `line`, with the built `pwflags` on the PATH.
    static func complete(_ line: String) throws -> [String] {
        let path = DaemonProcess.productsDirectory.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")
        let outcome = try Command.run(
            "/usr/bin/env", ["PATH=\(path)", "bash", "-c", driver, "complete", completion, line])
        return outcome.stdout.split(separator: "\n").map(String.init)
    }

    @Test func commandsAreTheCommandsOfTheHelp() throws {
        let help = HelpListing(try CLI.run(["--help"]).stdout, heading: "Commands:")
        let commands = help.entries.map { String($0.term.prefix { $0 != " " }) }
        #expect(commands.count > 10)
        #expect(try Self.complete("pwflags ").sorted() == commands.sorted())
        #expect(try Self.complete("pwflags set") == ["set-user-id"])
    }

    @Test func keysComeFromTheRunningDaemon() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let keys = Fixtures.all.map(\.key).sorted()
        #expect(try Self.complete("pwflags --socket \(daemon.socketPath) get ").sorted() == keys)
        #expect(try Self.complete("pwflags --socket \(daemon.socketPath) is-enabled new") == ["new_checkout"])
        #expect(try Self.complete("pwflags --socket \(daemon.socketPath) property ").sorted() == keys)
        // Without a reachable daemon there is nothing to offer, and no error on the terminal.
        #expect(try Self.complete("pwflags --socket \(daemon.directory.file("none.sock")) get ") == [])
    }

    @Test func optionValuesAreCompleted() throws {
        #expect(
            try Self.complete("pwflags property new_checkout color --type ") == ["string", "number", "bool", "json"])
        #expect(try Self.complete("pwflags app-state ") == ["foreground", "background"])
        #expect(try Self.complete("pwflags is-enabled new_checkout --default ") == ["true", "false"])
        #expect(try Self.complete("pwflags get --") == ["--socket", "--json", "--wait", "--help", "--version"])
        #expect(try Self.complete("pwflags listen --e") == ["--exec"])
        #expect(try Self.complete("pwflags listen --exec ") == [])
    }
}
