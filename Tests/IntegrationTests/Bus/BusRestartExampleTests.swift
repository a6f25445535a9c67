import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A change made while the daemon was stopped (docs/dbus.md, "Across a daemon restart"): no `Changed` carries it,
/// and the examples hear it by watching the name's owner and reading `GetAll` again when a daemon takes the name.
/// Both examples start before the daemon (they wait for it), sit through a restart that changed nothing (they
/// print nothing), hear a change made while the daemon ran, and then one made while it was stopped, printed
/// exactly as a `Changed` is.
///
/// The daemon runs as `pwflagsd` (the only user the shipped policy lets own the name), so the suite runs as root
/// (as CI does).
@Suite(.serialized, .hangLimit, .enabled(if: getuid() == 0, "runs the daemon as pwflagsd: needs root"))
struct BusRestartExampleTests {
    /// The two examples of docs/dbus.md, each with what it prints for `search_v2`.
    struct Example {
        let name: String
        let command: RunningCommand
        let searchLine: String
    }

    /// Starts both examples on `rig`'s bus as root (the daemon's check passes root whatever its socket's group:
    /// an example that reads the moment the name is taken does not race the test's chown of the socket).
    static func examples(on rig: BusRig, changes: Int) throws -> [Example] {
        let arguments = ["--address", rig.address, "--changes", String(changes)]
        let python = try RunningCommand("/usr/bin/python3", [BusTests.example] + arguments)
        let qt = try RunningCommand(try QtPrograms.busClient(), arguments)
        return [
            Example(name: "python", command: python, searchLine: "search_v2 enabled: True"),
            Example(name: "qt", command: qt, searchLine: "search_v2 enabled: true"),
        ]
    }

    /// Waits until `command` has a connection on `rig`'s bus: `busctl list` names its pid (the pid is the
    /// example's own: `stdbuf` execs it).
    static func waitUntilConnected(_ command: RunningCommand, to rig: BusRig) async -> Bool {
        let pid = String(command.process.processIdentifier)
        return await Eventually.wait {
            let listing = (try? rig.busctl(["list", "--no-legend"]))?.stdout ?? ""
            return listing.split(separator: "\n").contains { line in
                line.split(separator: " ").dropFirst().first == Substring(pid)
            }
        }
    }

    @Test func eachExampleHearsAChangeMadeWhileTheDaemonWasStopped() async throws {
        let rig = try BusRig()
        // No daemon yet: the examples connect and wait for the name instead of failing.
        let examples = try Self.examples(on: rig, changes: 2)
        for example in examples {
            let connected = await Self.waitUntilConnected(example.command, to: rig)
            #expect(connected, "\(example.name) never connected to the bus")
        }
        let daemon = try BusTests.daemon(on: rig)
        defer { daemon.cleanUp() }
        try await BusTests.waitForName(rig)
        for example in examples {
            let start = example.command.lines(through: "listening")
            #expect(
                start == [
                    "new_checkout: enabled (rule r_1a2b3c4d)", "  button_color = \"green\"", example.searchLine,
                    "listening",
                ], "\(example.name) did not read the daemon once it came: \(start ?? [])")
        }

        // A restart that changed nothing: the examples read again and print nothing. The change made next, while
        // the daemon runs, is then the first thing each prints, at the new daemon's revision 2.
        daemon.stop()
        let second = try BusTests.daemon(on: rig, directory: daemon.directory)
        defer { second.stop() }
        try await BusTests.waitForName(rig)
        var changed = BusTests.flags[0]
        changed.properties["button_color"] = "red"
        try second.writeFlags([changed] + BusTests.flags.dropFirst())
        for example in examples {
            let lines = example.command.lines(through: "\"red\"")
            #expect(
                lines == ["revision 2: changed new_checkout; removed -", "  new_checkout.button_color = \"red\""],
                "\(example.name): \(lines ?? [])")
        }

        // The user's report: the flags file edited while the daemon was stopped (button_color, and a flag
        // removed), then the daemon started again. No Changed carries this; the examples print it from their read
        // of the new daemon, at its revision 1, and end (their second change).
        second.stop()
        changed.properties["button_color"] = "purple"
        try daemon.writeFlags([changed, BusTests.flags[1]])
        let third = try BusTests.daemon(on: rig, directory: daemon.directory)
        defer { third.stop() }
        try await BusTests.waitForName(rig)
        for example in examples {
            let lines = example.command.lines(through: "\"purple\"")
            #expect(
                lines == [
                    "revision 1: changed new_checkout; removed search_v2", "  new_checkout.button_color = \"purple\"",
                ], "\(example.name): \(lines ?? [])")
            let ended = DaemonExitCheck.waitForExit(example.command.process, timeout: .seconds(10))
            #expect(ended, "\(example.name) did not end after its second change")
            if ended { #expect(example.command.process.terminationStatus == 0, "\(example.name)") }
        }
    }
}
