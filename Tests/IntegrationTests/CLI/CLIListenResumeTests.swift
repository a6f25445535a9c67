import FlagsCore
import Foundation
import TestSupport
import Testing

/// `pwflags listen` without `--exec` outlives daemon restarts (an upgrade restarts the service): it waits for the
/// daemon, resumes from the epoch and revision it saw, and prints each change once.
@Suite(.hangLimit) struct CLIListenResumeTests {
    /// The next line `listener` prints, failing the test when none comes.
    static func nextLine(_ listener: RunningCLI) throws -> String {
        try #require(listener.readLine(timeout: .seconds(15)), "pwflags listen printed nothing")
    }

    @Test("A restart with the flags unchanged prints nothing; changes made while the daemon was down print once")
    func resumesAcrossRestartsPrintingEachChangeOnce() async throws {
        let first = try DaemonProcess.serving(Fixtures.all)
        defer { first.directory.remove() }
        let listener = try CLI.start(["--socket", first.socketPath, "listen"])
        defer { listener.stop() }
        try await CLIListenExecTests.waitForSubscription(first)

        // Restarted with the same flags: the listener resubscribes and prints nothing. The next line it prints
        // is the change made after that, so nothing came before it.
        let second = try first.restarted()
        try await CLIListenExecTests.waitForSubscription(second)
        try await CLIListenExecTests.write(CLIListenExecTests.flags(darkMode: true), to: second, revision: 2)
        #expect(try Self.nextLine(listener).hasPrefix("revision 2: changed dark_mode: enabled"))

        // Down, then a new flag set: dark_mode off again, holiday_banner gone. The restarted daemon's listing
        // is compared with what was printed: two lines at its revision, search_v2 (unchanged) not among them.
        _ = second.stop()
        try first.writeFlags(Fixtures.all.filter { $0.key != "holiday_banner" })
        let third = try DaemonProcess(config: LocalFlags.config(in: first.directory), directory: first.directory)
        defer { _ = third.stop() }
        #expect(try Self.nextLine(listener).hasPrefix("revision 1: changed dark_mode: disabled"))
        #expect(try Self.nextLine(listener) == "revision 1: removed holiday_banner")

        // And it goes on listening to the new daemon.
        try await CLIListenExecTests.waitForSubscription(third)
        var search = Fixtures.searchV2
        search.isEnabled = false
        try await CLIListenExecTests.write(
            Fixtures.all.filter { $0.key != "holiday_banner" && $0.key != "search_v2" } + [search], to: third,
            revision: 2)
        #expect(try Self.nextLine(listener).hasPrefix("revision 2: changed search_v2: disabled"))
        #expect(listener.process.isRunning)
    }

    @Test("With --json a resumed change is one flagsChanged params object holding only what differs")
    func resumedChangeInJSON() async throws {
        let first = try DaemonProcess.serving(CLIListenExecTests.flags(darkMode: false))
        defer { first.directory.remove() }
        let listener = try CLI.start(["--socket", first.socketPath, "--json", "listen", "dark_mode", "search_v2"])
        defer { listener.stop() }
        try await CLIListenExecTests.waitForSubscription(first)
        _ = first.stop()
        try first.writeFlags(CLIListenExecTests.flags(darkMode: true))
        let second = try DaemonProcess(config: LocalFlags.config(in: first.directory), directory: first.directory)
        defer { _ = second.stop() }
        let epoch = try #require(try second.connect().call("status")?["result"]?["epoch"]?.stringValue)
        let line = try Self.nextLine(listener)
        let params = try JSONValue(parsing: Array(line.utf8))
        #expect(params["epoch"] == .string(epoch), "\(line)")
        #expect(params["revision"] == .number(1), "\(line)")
        #expect(params["removed"] == .array([]), "\(line)")
        let changed = try #require(params["changed"]?.arrayValue, "\(line)")
        #expect(changed.map { $0["key"] } == [.string("dark_mode")], "\(line)")
        #expect(changed.first?["enabled"] == .bool(true), "\(line)")
    }
}
