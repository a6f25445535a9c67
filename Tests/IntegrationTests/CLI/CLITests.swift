import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The `pwflags` binary against a real daemon: output, exit statuses, help, errors.
@Suite(.hangLimit) struct CLITests {
    private func run(_ daemon: DaemonProcess, _ arguments: [String]) throws -> CLI.Outcome {
        try CLI.run(["--socket", daemon.socketPath] + arguments)
    }

    @Test func getPrintsTheFlagAndExitsZero() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let outcome = try run(daemon, ["get", "new_checkout"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stdout.contains("new_checkout: enabled (rule r_1a2b3c4d)"))
        #expect(outcome.stdout.contains(#"button_color = "green""#))
    }

    @Test(arguments: ["absent", "NEW_CHECKOUT"])
    func getOfAnAbsentFlagExitsOne(key: String) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let outcome = try run(daemon, ["get", key])
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stderr.contains(key))
    }

    @Test(arguments: [
        (["is-enabled", "new_checkout"], Int32(0), "true"),
        (["is-enabled", "dark_mode"], Int32(1), "false"),
        (["is-enabled", "dark_mode", "--default", "true"], Int32(1), "false"),
        (["is-enabled", "absent"], Int32(1), "false"),
        (["is-enabled", "absent", "--default", "true"], Int32(0), "true"),
        (["is-enabled", "absent", "--default=false"], Int32(1), "false"),
    ])
    func isEnabledExitStatusFollowsTheAnswer(arguments: [String], status: Int32, printed: String) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let outcome = try run(daemon, arguments)
        #expect(outcome.status == status, "\(outcome)")
        #expect(outcome.stdout == printed + "\n")
    }

    @Test(arguments: [
        (["button_color", "--type", "string"], Int32(0), "green"),
        (["button_color", "--type", "number", "--default", "3"], Int32(0), "3"),
        (["max_items", "--type", "number"], Int32(0), "5"),
        (["max_items", "--type", "string", "--default", "none"], Int32(0), "none"),
        (["max_items", "--type", "bool", "--default", "false"], Int32(0), "false"),
        (["express", "--type", "bool"], Int32(0), "true"),
        (["express", "--type", "number", "--default", "2.5"], Int32(0), "2.5"),
        (["layout", "--type", "json"], Int32(0), #"{"columns":2}"#),
        (["steps", "--type", "json"], Int32(0), #"["cart","pay"]"#),
        (["missing", "--type", "string", "--default", "fallback"], Int32(0), "fallback"),
        (["missing", "--type", "string"], Int32(1), ""),
        (["missing", "--type", "json"], Int32(1), ""),
    ])
    func propertyReadsEachTypeWithItsDefault(arguments: [String], status: Int32, printed: String) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let outcome = try run(daemon, ["property", "new_checkout"] + arguments)
        #expect(outcome.status == status, "\(outcome)")
        #expect(outcome.stdout == (printed.isEmpty ? "" : printed + "\n"), "\(outcome)")
    }

    @Test func propertyOfAnAbsentFlagPrintsTheDefaultAndExitsOne() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let outcome = try run(daemon, ["property", "absent", "x", "--type", "number", "--default", "7"])
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stdout == "7\n")
    }

    @Test func listPrintsEveryFlagSortedByKey() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let outcome = try run(daemon, ["list"])
        #expect(outcome.status == 0, "\(outcome)")
        let heads = outcome.stdout.split(separator: "\n").filter { !$0.hasPrefix(" ") }.map { $0.prefix { $0 != ":" } }
        #expect(heads == ["New_Checkout", "dark_mode", "holiday_banner", "new_checkout", "search_v2"])
        #expect(outcome.stdout.contains("holiday_banner: disabled (killed)"))
    }

    @Test func statusPrintsTheSourceAndCount() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let outcome = try run(daemon, ["status"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stdout.contains("source: file"))
        #expect(outcome.stdout.contains("flags: 5"))
    }

    @Test(arguments: [
        ["get", "new_checkout"], ["get", "absent"], ["list"], ["status"], ["is-enabled", "dark_mode"],
        ["property", "new_checkout", "layout", "--type", "json"], ["refresh"], ["impression", "dark_mode"],
    ])
    func jsonOutputParses(arguments: [String]) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let outcome = try run(daemon, ["--json"] + arguments)
        #expect(outcome.status == 0 || outcome.status == 1, "\(outcome)")
        let lines = outcome.stdout.split(separator: "\n")
        #expect(lines.count == 1, "\(outcome)")
        for line in lines { #expect(throws: Never.self) { try JSONValue(parsing: String(line)) } }
    }

    @Test func jsonListIsTheGetAllResult() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let outcome = try run(daemon, ["list", "--json"])
        let value = try JSONValue(parsing: outcome.stdout.trimmingCharacters(in: .newlines))
        #expect(value["flags"] == Fixtures.wire(Fixtures.all))
        #expect(value["revision"] == 1)
    }

    @Test(arguments: ["get", "is-enabled", "property", "list", "listen", "status", "refresh", "impression"])
    func eachCommandHasHelp(command: String) throws {
        for arguments in [[command, "--help"], ["--help", command], ["help", command]] {
            let outcome = try CLI.run(arguments)
            #expect(outcome.status == 0, "\(outcome)")
            #expect(outcome.stdout.contains("Usage: pwflags \(command)"), "\(outcome)")
        }
    }

    @Test func generalHelpExitsZero() throws {
        let outcome = try CLI.run(["--help"])
        #expect(outcome.status == 0)
        #expect(outcome.stdout.contains("Commands:"))
    }

    @Test(arguments: [
        [String](), ["frobnicate"], ["get"], ["get", "a", "b"], ["is-enabled", "a", "--default", "maybe"],
        ["property", "k", "n"], ["property", "k", "n", "--type", "date"],
        ["property", "k", "n", "--type", "json", "--default", "x"],
        ["property", "k", "n", "--type", "number", "--default", "abc"], ["list", "--bogus", "1"],
        ["--wait", "soon", "list"],
        ["--socket"],
    ])
    func usageErrorsExitTwo(arguments: [String]) throws {
        let outcome = try CLI.run(["--socket", "/nonexistent/pwflags-test.sock"] + arguments)
        #expect(outcome.status == 2, "\(outcome)")
    }

    @Test(arguments: [["get", "a"], ["list"], ["status"], ["is-enabled", "a"], ["listen"]])
    func anUnreachableSocketExits69NamingThePath(arguments: [String]) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("nobody.sock")
        let outcome = try CLI.run(["--socket", path] + arguments)
        #expect(outcome.status == 69, "\(outcome)")
        #expect(outcome.stderr.contains(path), "\(outcome)")
    }

    @Test func versionPrintsTheVersionAndExitsZero() throws {
        let outcome = try CLI.run(["--version"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stdout == "pwflags \(PWFlagsVersion.current)\n", "\(outcome)")
        let daemon = try CLI.run(["--version"], executable: "pwflagsd")
        #expect(daemon.status == 0, "\(daemon)")
        #expect(daemon.stdout == "pwflagsd \(PWFlagsVersion.current)\n", "\(daemon)")
    }

    /// Without /proc the Swift runtime sees no command line: the binary must refuse, not start a daemon on the
    /// default configuration (which a root `pwflags --version` in a bare chroot used to do).
    @Test func withoutProcNothingRunsAndTheReasonIsSaid() throws {
        for name in ["pwflagsd", "pwflags"] {
            let link = try TemporaryDirectory(prefix: "pwproc")
            defer { link.remove() }
            // The package's /usr/bin/pwflags is a link to pwflagsd: the same binary under both names.
            symlink(DaemonProcess.executable("pwflagsd"), link.file(name))
            let script = "mount -t tmpfs none /proc && exec \"$0\" --version"
            let outcome = try Command.run(
                "/usr/bin/unshare", ["--mount", "--", "/bin/sh", "-c", script, link.file(name)],
                check: false, timeout: .seconds(20))
            // Under a sanitizer the runtime's own exit check needs /proc too and turns the 2 into a 1.
            let sanitized = ProcessInfo.processInfo.environment.keys.contains { $0.hasSuffix("SAN_OPTIONS") }
            #expect(outcome.status == 2 || (sanitized && outcome.status == 1), "\(name): \(outcome)")
            #expect(outcome.stderr.contains("/proc is not mounted"), "\(name): \(outcome)")
        }
    }

    @Test func pwflagsSocketEnvironmentIsHonoured() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let outcome = try CLI.run(["is-enabled", "new_checkout"], environment: ["PWFLAGS_SOCKET": daemon.socketPath])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stdout == "true\n")
        // --socket wins over the environment.
        let overridden = try CLI.run(
            ["--socket", daemon.directory.file("none.sock"), "list"],
            environment: ["PWFLAGS_SOCKET": daemon.socketPath]
        )
        #expect(overridden.status == 69, "\(overridden)")
    }

    @Test func listenPrintsALineSoonAfterAnEdit() async throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        // The edit must come after pwflags has subscribed: the daemon's subscription count tells when it has.
        let listener = try CLI.start(["--socket", daemon.socketPath, "listen", "dark_mode"])
        defer { listener.stop() }
        let client = try daemon.connect()
        let subscribed = try await Eventually.wait { try client.call("status")?["result"]?["subscriptions"] == 1 }
        try #require(subscribed, "pwflags listen did not subscribe")
        var darkOn = Fixtures.darkMode
        darkOn.isEnabled = true
        try daemon.writeFlags(Fixtures.all.filter { $0.key != "dark_mode" } + [darkOn])
        let started = ContinuousClock.now
        let line = try #require(listener.readLine(timeout: .seconds(5)))
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(line.contains("revision 2: changed dark_mode: enabled"), "\(line)")
    }
}
