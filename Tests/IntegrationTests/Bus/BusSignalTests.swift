import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Forged `Changed` signals (docs/dbus.md, "Only the daemon's signals"): under the shipped policy the bus
/// refuses them from anyone but the daemon's user, on dbus-daemon and on dbus-broker; and the examples match on
/// the sender, so that on a bus that lets a forgery through they still hear only the daemon, across its restart.
///
/// Users are created and the daemon runs as `pwflagsd`, so the suite runs as root (as CI does).
@Suite(.serialized, .hangLimit, .enabled(if: getuid() == 0, "creates users, runs the daemon as pwflagsd: needs root"))
struct BusSignalTests {
    /// A subscriber that matches no sender: prints `unique NAME` once subscribed, then `changed REVISION from
    /// SENDER` for every Changed it is given and `probe` for each probe signal.
    static let witness = """
        import sys, dbus, dbus.mainloop.glib
        from gi.repository import GLib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        def changed(revision, flags, removed, sender=None):
            print("changed", int(revision), "from", sender, flush=True)
        bus.add_signal_receiver(changed, signal_name="Changed", dbus_interface="io.github.pwflagsd.Flags1",
                                path="/io/github/pwflagsd/Flags1", sender_keyword="sender")
        bus.add_signal_receiver(lambda: print("probe", flush=True), signal_name="Probe",
                                dbus_interface="io.github.pwflagsd.Test")
        print("unique", bus.get_unique_name(), flush=True)
        GLib.MainLoop().run()
        """

    /// Sends, on one connection and so in this order, a forged Changed (revision 999, a flag `forged_flag`) to
    /// everyone, the same to each connection of the processes whose pids follow the address, and then a probe
    /// signal to everyone: a subscriber that hears the probe has been given whatever of the forgery the bus let
    /// through.
    static let forger = """
        import sys, dbus
        bus = dbus.bus.BusConnection(sys.argv[1])
        pids = set(int(pid) for pid in sys.argv[2:])
        daemon = bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus")
        targets = [None] + [name for name in daemon.ListNames(dbus_interface="org.freedesktop.DBus")
                            if name.startswith(":") and name != bus.get_unique_name()
                            and int(daemon.GetConnectionUnixProcessID(name, dbus_interface="org.freedesktop.DBus")) in pids]
        for target in targets:
            message = dbus.lowlevel.SignalMessage("/io/github/pwflagsd/Flags1", "io.github.pwflagsd.Flags1", "Changed")
            message.append(dbus.UInt64(999), dbus.Array([("forged_flag", True, "r_forged",
                                                          dbus.Dictionary({}, signature="sv"), "{}")],
                                                         signature="(sbsa{sv}s)"),
                           dbus.Array([], signature="s"))
            if target:
                message.set_destination(target)
            bus.send_message(message)
        bus.send_message(dbus.lowlevel.SignalMessage("/probe", "io.github.pwflagsd.Test", "Probe"))
        bus.flush()
        print("forged", len(targets) - 1, "unicast", flush=True)
        """

    /// Runs the forger as `user` (root when nil), aiming its unicast forgeries at `processes`.
    static func forge(on rig: BusRig, as user: SystemUser?, at processes: [RunningCommand]) throws -> CLI.Outcome {
        let pids = processes.map { String($0.process.processIdentifier) }
        return try rig.run("/usr/bin/python3", ["-c", forger, rig.address] + pids, as: user)
    }

    /// The listeners of one test: the Python and Qt examples, `gdbus monitor`, and the witness, all run as a
    /// member of `pwflags`.
    struct Listeners {
        let python: RunningCommand
        let qt: RunningCommand
        let gdbus: RunningCommand
        let witness: RunningCommand

        init(on rig: BusRig, as member: SystemUser, changes: Int) throws {
            let example = ["--address", rig.address, "--changes", String(changes)]
            python = try RunningCommand("/usr/bin/python3", [BusTests.example] + example, as: member)
            qt = try RunningCommand(try QtPrograms.busClient(), example, as: member)
            gdbus = try RunningCommand(
                "/usr/bin/gdbus", ["monitor", "--address", rig.address, "-d", BusRig.name, "-o", BusRig.path],
                as: member)
            witness = try RunningCommand("/usr/bin/python3", ["-c", BusSignalTests.witness, rig.address], as: member)
        }

        var examples: [(String, RunningCommand)] { [("python", python), ("qt", qt), ("gdbus monitor", gdbus)] }

        /// Waits until each has subscribed.
        func waitUntilListening() {
            #expect(python.waitForLine(containing: "listening"), "the Python example never subscribed")
            #expect(qt.waitForLine(containing: "listening"), "the Qt example never subscribed")
            #expect(gdbus.waitForLine(containing: "is owned by"), "gdbus monitor never saw the daemon's name")
            #expect(witness.waitForLine(containing: "unique :"), "the witness never subscribed")
        }
    }

    @Test(
        "The shipped policy refuses a member's and root's forged Changed, broadcast or unicast; the daemon's passes",
        arguments: BusKind.allCases)
    func theShippedPolicyRefusesForgedSignals(bus: BusKind) async throws {
        let rig = try BusRig(bus)
        let daemon = try BusTests.daemon(on: rig)
        defer { daemon.cleanUp() }
        try await BusTests.waitForName(rig)
        let member = try SystemUser(prefix: "pwfs", groupNames: ["pwflags"])
        defer { member.remove() }
        let listeners = try Listeners(on: rig, as: member, changes: 1)
        listeners.waitUntilListening()

        for forger in [member, nil] {
            let forged = try Self.forge(on: rig, as: forger, at: [listeners.witness])
            #expect(forged.stdout == "forged 1 unicast\n", "\(forged)")
            let heard = listeners.witness.lines(through: "probe")
            #expect(heard == ["probe"], "\(bus) let \(forger?.name ?? "root")'s forgery through: \(heard ?? [])")
        }

        var changed = BusTests.flags[0]
        changed.properties["button_color"] = "red"
        try daemon.writeFlags([changed] + BusTests.flags.dropFirst())
        #expect(listeners.witness.waitForLine(containing: "changed 2 from :"), "the daemon's signal never came")
        for (name, example) in listeners.examples {
            #expect(example.waitForLine(containing: name == "gdbus monitor" ? "uint64 2" : "revision 2"), "\(name)")
        }
    }

    @Test(
        "Where the bus lets a forged Changed through, the examples ignore it and follow the daemon across a restart",
        arguments: BusKind.allCases)
    func theExamplesMatchTheSender(bus: BusKind) async throws {
        // After the shipped file: signals on the path from anyone (the default context's last word).
        let rig = try BusRig(
            bus,
            extraPolicy: """
                <policy context="default"><allow send_path="\(BusRig.path)" send_type="signal"/></policy>
                """)
        let daemon = try BusTests.daemon(on: rig)
        defer { daemon.cleanUp() }
        try await BusTests.waitForName(rig)
        let member = try SystemUser(prefix: "pwfs", groupNames: ["pwflags"])
        defer { member.remove() }
        let listeners = try Listeners(on: rig, as: member, changes: 2)
        listeners.waitUntilListening()

        // The forgery reaches the witness (this bus lets it through), broadcast and sent to each example alone.
        let targets = [listeners.python, listeners.qt, listeners.gdbus, listeners.witness]
        let forged = try Self.forge(on: rig, as: member, at: targets)
        #expect(forged.stdout == "forged 4 unicast\n", "\(forged)")
        let heard = listeners.witness.lines(through: "probe") ?? []
        #expect(heard.count == 3 && heard.allSatisfy { $0.hasPrefix("changed 999") || $0 == "probe" }, "\(heard)")

        // The daemon's change is the first one each example prints.
        var changed = BusTests.flags[0]
        changed.properties["button_color"] = "red"
        try daemon.writeFlags([changed] + BusTests.flags.dropFirst())
        try Self.expectChange(to: "red", in: listeners)

        // A restart: a new owner of the name, which the examples follow; its first change is heard too.
        _ = daemon.stop()
        let second = try BusTests.daemon(on: rig, directory: daemon.directory)
        defer { second.stop() }
        try await BusTests.waitForName(rig)
        #expect(
            listeners.gdbus.waitForLine(containing: "is owned by"), "gdbus monitor never saw the new owner")
        changed.properties["button_color"] = "blue"
        try second.writeFlags([changed] + BusTests.flags.dropFirst())
        try Self.expectChange(to: "blue", in: listeners)
        #expect(listeners.python.process.waitUntilExit(timeout: .seconds(10)), "the Python example did not end")
        #expect(listeners.qt.process.waitUntilExit(timeout: .seconds(10)), "the Qt example did not end")
    }

    /// Each example's next lines hold the daemon's change of `button_color` to `color`, and nothing forged.
    static func expectChange(to color: String, in listeners: Listeners) throws {
        for (name, example) in listeners.examples {
            let lines = example.lines(through: name == "gdbus monitor" ? "'\(color)'" : "= \"\(color)\"")
            #expect(lines != nil, "\(name) never printed the change to \(color)")
            let text = (lines ?? []).joined(separator: "\n")
            #expect(!text.contains("forged") && !text.contains("999"), "\(name) took the forgery: \(text)")
        }
    }
}

extension Process {
    /// Waits for the process to end; false when `timeout` passed first.
    fileprivate func waitUntilExit(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isRunning, ContinuousClock.now < deadline, !Task.isCancelled { usleep(10_000) }
        return !isRunning
    }
}
