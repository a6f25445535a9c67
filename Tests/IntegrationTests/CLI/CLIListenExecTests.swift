import FlagsCore
import Foundation
import TestSupport
import Testing

/// `pwflags listen --exec CMD KEY...`: the command runs on each change of the listened flags, with the change in
/// its environment, one run at a time, through failures and daemon restarts.
@Suite(.hangLimit) struct CLIListenExecTests {
    /// The lines the command appended to `file` so far.
    static func lines(_ file: String) -> [String] {
        ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Waits until `daemon` counts `count` subscriptions: the CLI has subscribed.
    static func waitForSubscription(_ daemon: DaemonProcess, count: Int = 1) async throws {
        let client = try daemon.connect()
        let subscribed = try await Eventually.wait(timeout: .seconds(15)) {
            try client.call("status")?["result"]?["subscriptions"] == .number(Double(count))
        }
        try #require(subscribed, "pwflags listen --exec did not subscribe")
    }

    /// Writes `flags` and waits until the daemon serves them at `revision` (the daemon may take quick edits of
    /// the file as one change).
    static func write(_ flags: [Flag], to daemon: DaemonProcess, revision: Int) async throws {
        try daemon.writeFlags(flags)
        let client = try daemon.connect()
        let served = try await Eventually.wait(timeout: .seconds(10)) {
            try client.call("status")?["result"]?["revision"] == .number(Double(revision))
        }
        try #require(served, "the daemon did not reach revision \(revision)")
    }

    /// `Fixtures.all` with dark_mode enabled or not and `rule` as its rule id.
    static func flags(darkMode enabled: Bool, rule: String = "r_5e6f7a8b") -> [Flag] {
        var dark = Fixtures.darkMode
        dark.isEnabled = enabled
        dark.ruleId = rule
        return Fixtures.all.filter { $0.key != "dark_mode" } + [dark]
    }

    @Test("The command runs on a change of a listened flag with the change in its environment, not on other flags")
    func runsTheCommandWithTheChange() async throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let out = daemon.directory.file("runs.txt")
        let command = #"echo "$PWFLAGS_EPOCH $PWFLAGS_REVISION [$PWFLAGS_CHANGED] [$PWFLAGS_REMOVED]" >> "\#(out)""#
        let listener = try CLI.start(
            ["--socket", daemon.socketPath, "listen", "--exec", command, "dark_mode", "holiday_banner"])
        defer { listener.stop() }
        try await Self.waitForSubscription(daemon)
        let epoch = try #require(try daemon.connect().call("status")?["result"]?["epoch"]?.stringValue)

        // search_v2 is not listened to: no run.
        var search = Fixtures.searchV2
        search.isEnabled = false
        try await Self.write(Fixtures.all.filter { $0.key != "search_v2" } + [search], to: daemon, revision: 2)
        let changed = Self.flags(darkMode: true).filter { $0.key != "holiday_banner" && $0.key != "search_v2" }
        try await Self.write(changed + [search], to: daemon, revision: 3)
        #expect(await Eventually.wait(timeout: .seconds(10)) { !Self.lines(out).isEmpty })
        #expect(await !Eventually.wait(timeout: .milliseconds(300)) { Self.lines(out).count > 1 })
        #expect(Self.lines(out) == ["\(epoch) 3 [dark_mode] [holiday_banner]"])
    }

    @Test("Keys with a space, a NUL, a newline or a percent sign reach the command whole, one word each")
    func keysCannotForgeTheList() async throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let out = daemon.directory.file("keys.txt")
        let command = #"for k in $PWFLAGS_CHANGED; do echo "<$k>" >> "\#(out)"; done"#
        let listener = try CLI.start(["--socket", daemon.socketPath, "listen", "--exec", command])
        defer { listener.stop() }
        try await Self.waitForSubscription(daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        // Overrides one after another: the runs may take several changes together, every key is heard once.
        for key in ["two words", "nul\u{0}cut", "new\nline", "100%", "z_last"] {
            _ = try session.result("setOverride", ["key": .string(key), "enabled": true])
        }
        let expected = ["<100%25>", "<new%0Aline>", "<nul%00cut>", "<two%20words>", "<z_last>"]
        #expect(
            await Eventually.wait(timeout: .seconds(10)) { Self.lines(out).sorted() == expected }, "\(Self.lines(out))")
    }

    @Test("Runs never overlap, a failing command is reported and the next change runs it again")
    func runsOneAtATimeThroughFailures() async throws {
        let daemon = try DaemonProcess.serving(Self.flags(darkMode: false))
        defer { daemon.cleanUp() }
        let log = daemon.directory.file("log.txt")
        let command =
            #"echo "start $PWFLAGS_REVISION" >> "\#(log)"; sleep 0.3; echo "end $PWFLAGS_REVISION" >> "\#(log)"; exit 3"#
        let listener = try CLI.start(["--socket", daemon.socketPath, "listen", "--exec", command, "dark_mode"])
        defer { listener.stop() }
        try await Self.waitForSubscription(daemon)

        // Three changes while the first run sleeps: they wait for it, then run (at most) once more.
        for (round, enabled) in [true, false, true].enumerated() {
            try await Self.write(Self.flags(darkMode: enabled, rule: "r_\(round)"), to: daemon, revision: round + 2)
            if round == 0 { #expect(await Eventually.wait(timeout: .seconds(10)) { !Self.lines(log).isEmpty }) }
        }
        #expect(await Eventually.wait(timeout: .seconds(10)) { Self.lines(log).last == "end 4" }, "\(Self.lines(log))")
        let lines = Self.lines(log)
        // start and end alternate, each end closing the run it follows.
        for (index, line) in lines.enumerated() {
            let revision = line.split(separator: " ").last.map(String.init) ?? ""
            let expected = index % 2 == 0 ? "start \(revision)" : "end \(lines[index - 1].dropFirst(6))"
            #expect(line == expected, "\(lines)")
        }
        #expect(lines.count >= 4, "the failing first run stopped the listening: \(lines)")
        #expect(listener.process.isRunning)
    }

    @Test("Across a daemon restart the command runs only when a listened flag changed meanwhile")
    func resumesAcrossDaemonRestarts() async throws {
        let first = try DaemonProcess.serving(Self.flags(darkMode: false))
        defer { first.directory.remove() }
        let out = first.directory.file("runs.txt")
        let command = #"echo "$PWFLAGS_EPOCH $PWFLAGS_REVISION [$PWFLAGS_CHANGED]" >> "\#(out)""#
        let listener = try CLI.start(["--socket", first.socketPath, "listen", "--exec", command, "dark_mode"])
        defer { listener.stop() }
        try await Self.waitForSubscription(first)

        // A restart that changed nothing runs nothing. Shown by what comes next: the CLI handles the daemon's
        // messages in order, so once the run for a later change is in the file, anything the restart ran would be
        // there before it.
        let second = try first.restarted()
        try await Self.waitForSubscription(second)
        let secondEpoch = try #require(try second.connect().call("status")?["result"]?["epoch"]?.stringValue)
        try first.writeFlags(Self.flags(darkMode: true))
        #expect(await Eventually.wait(timeout: .seconds(15)) { !Self.lines(out).isEmpty })
        let afterRestart = Self.lines(out)
        #expect(afterRestart.count == 1 && afterRestart.first?.hasPrefix("\(secondEpoch) ") == true, "\(afterRestart)")
        #expect(afterRestart.first?.hasSuffix(" [dark_mode]") == true, "\(afterRestart)")

        // A restart on flags that changed meanwhile runs the command once for that change.
        _ = second.stop()
        try first.writeFlags(Self.flags(darkMode: false))
        let third = try DaemonProcess(config: LocalFlags.config(in: first.directory), directory: first.directory)
        defer { _ = third.stop() }
        let epoch = try #require(try third.connect().call("status")?["result"]?["epoch"]?.stringValue)
        #expect(await Eventually.wait(timeout: .seconds(15)) { Self.lines(out).count >= 2 })
        // Then one more change: its run follows that one directly, so the restart ran the command once only.
        try first.writeFlags(Self.flags(darkMode: true))
        #expect(await Eventually.wait(timeout: .seconds(15)) { Self.lines(out).count >= 3 })
        let revision = try #require(try third.connect().call("status")?["result"]?["revision"]?.integerValue)
        #expect(
            Array(Self.lines(out).dropFirst()) == ["\(epoch) 1 [dark_mode]", "\(epoch) \(revision) [dark_mode]"],
            "\(Self.lines(out))")
    }

    @Test("--exec with no daemon to reach exits 69 at once; without a command it is a usage error")
    func execNeedsADaemonAndACommand() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("nobody.sock")
        let unreachable = try CLI.run(["--socket", path, "listen", "--exec", "true", "k"])
        #expect(unreachable.status == 69, "\(unreachable)")
        let usage = try CLI.run(["--socket", path, "listen", "k", "--exec"])
        #expect(usage.status == 2, "\(usage)")
    }
}
