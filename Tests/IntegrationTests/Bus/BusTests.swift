import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon on a message bus (docs/dbus.md), with clients nobody here wrote: `busctl` (systemd), `gdbus`
/// (GLib), `dbus-send` and `dbus-monitor` (the reference implementation), and python3-dbus, on a private
/// `dbus-daemon` that runs the system bus's default policy and the policy file the package installs.
///
/// Users and groups are created for the access tests, so the suite runs as root (as CI does).
@Suite(.serialized, .hangLimit, .enabled(if: getuid() == 0, "creates users and the pwflags group: needs root"))
struct BusTests {
    static let flags = [
        Fixtures.checkout,
        Flag(
            key: "layout", isEnabled: true, ruleId: "r_2",
            properties: ["grid": .object(["columns": 2, "dense": true]), "steps": ["cart", "pay"], "gone": .null]),
        Fixtures.search,
    ]

    /// A daemon serving `flags` on `rig`'s bus as the package's user `pwflagsd` (the only user the policy lets
    /// own the name and send signals; made if the machine lacks it); its socket is `root:pwflags 0660`, as the
    /// package's socket unit makes it, and its directory open to other users' clients. With `directory`, the
    /// daemon starts again on an earlier one's flags, state and socket: a restart.
    static func daemon(on rig: BusRig, extra: String = "", directory: TemporaryDirectory? = nil) throws
        -> DaemonProcess
    {
        let group = try SystemGroup.ensure("pwflags")
        let user = try SystemUser.ensureSystemUser(daemonUser)
        let folder = try directory ?? TemporaryDirectory()
        if directory == nil { try folder.write(LocalFlags.fileName, LocalFlags.text(flags)) }
        let daemon = try DaemonProcess(
            config: LocalFlags.config(in: folder, extra: "[DBus]\nBus=system\n" + extra), directory: folder,
            environment: rig.daemonEnvironment, launcher: user.launcher(handingOver: ["${NOTIFY_SOCKET%/*}"]))
        chmod(daemon.directory.path, 0o755)
        chown(daemon.socketPath, 0, getgrnam(group)?.pointee.gr_gid ?? 0)
        return daemon
    }

    /// The user the package's daemon runs as (`systemd/pwflagsd.sysusers.conf`), named in the bus policy.
    static let daemonUser = "pwflagsd"

    /// Waits until the daemon owns its name on the bus.
    static func waitForName(_ rig: BusRig) async throws {
        let owned = await Eventually.wait {
            (try? rig.busctl(["status", BusRig.name]))?.status == 0
        }
        try #require(owned, "the daemon never owned \(BusRig.name)")
    }

    @Test func busctlGdbusDbusSendAndPythonReadFlags() async throws {
        let rig = try BusRig()
        let daemon = try Self.daemon(on: rig)
        defer { daemon.cleanUp() }
        try await Self.waitForName(rig)

        let get = try rig.call("Get", "s", ["new_checkout"])
        #expect(get.status == 0, "\(get)")
        #expect(get.stdout.hasPrefix(#"bbsa{sv}s true true "r_1a2b3c4d" 1 "button_color" s "green""#), "\(get)")
        let missing = try rig.call("Get", "s", ["nope"])
        #expect(missing.stdout.hasPrefix(#"bbsa{sv}s false false "" 0 """#), "\(missing)")
        #expect(try rig.call("IsEnabled", "sb", ["nope", "true"]).stdout == "b true\n")
        #expect(try rig.call("IsEnabled", "sb", ["search_v2", "false"]).stdout == "b true\n")

        // Nested JSON as native types: an object as a{sv}, an array as av; a null member left out.
        let gdbus = try rig.gdbus(["Get", "layout"])
        #expect(gdbus.status == 0, "\(gdbus)")
        #expect(
            gdbus.stdout.hasPrefix(
                "(true, true, 'r_2', {'grid': <{'columns': <2.0>, 'dense': <true>}>, 'steps': <[<'cart'>, <'pay'>]>}, "),
            "\(gdbus)")
        #expect(gdbus.stdout.contains(#""gone":null"#), "the flag's JSON text keeps the null: \(gdbus)")

        // dbus-send --address would not register on the bus (it is for peer-to-peer): --system with the variable.
        let send = try rig.run(
            "/usr/bin/env",
            [
                "DBUS_SYSTEM_BUS_ADDRESS=\(rig.address)", "dbus-send", "--system", "--print-reply",
                "--dest=\(BusRig.name)",
                BusRig.path, "\(BusRig.interface).IsEnabled", "string:new_checkout", "boolean:false",
            ])
        #expect(send.stdout.contains("boolean true"), "\(send)")

        let all = try rig.call("GetAll")
        #expect(all.stdout.hasPrefix("sta(sbsa{sv}s) \""), "\(all)")
        #expect(all.stdout.contains(#" 1 3 "layout""#), "revision 1, three flags, in key order: \(all)")

        let revision = try rig.busctl(["get-property", BusRig.name, BusRig.path, BusRig.interface, "Revision"])
        #expect(revision.stdout == "t 1\n", "\(revision)")

        let python = try rig.run("/usr/bin/python3", [Self.example, "--address", rig.address])
        #expect(python.status == 0, "\(python)")
        #expect(
            python.stdout.hasPrefix(
                "new_checkout: enabled (rule r_1a2b3c4d)\n  button_color = \"green\"\nsearch_v2 enabled: True\n"),
            "\(python)")

        let qt = try rig.run(try QtPrograms.busClient(), ["--address", rig.address])
        #expect(qt.status == 0, "\(qt)")
        #expect(
            qt.stdout.hasPrefix(
                "new_checkout: enabled (rule r_1a2b3c4d)\n  button_color = \"green\"\nsearch_v2 enabled: true\n"),
            "\(qt)")
    }

    /// docs/dbus.md's Python example.
    static let example = Repository.path("examples/dbus/flags.py")

    @Test func theInstalledIntrospectionIsWhatTheDaemonServes() async throws {
        let rig = try BusRig()
        let daemon = try Self.daemon(on: rig)
        defer { daemon.cleanUp() }
        try await Self.waitForName(rig)
        let served = try rig.run(
            "/usr/bin/gdbus",
            ["introspect", "--address", rig.address, "-d", BusRig.name, "-o", BusRig.path, "--xml"])
        let installed = try String(
            contentsOfFile: "\(BusRig.dbusDirectory)/\(BusRig.interface).xml", encoding: .utf8)
        #expect(Self.members(of: served.stdout) == Self.members(of: installed))
        #expect(Self.members(of: installed).count == 45, "\(Self.members(of: installed))")
    }

    /// The method, argument, property and signal lines of the daemon's interface, white space folded.
    static func members(of xml: String) -> [String] {
        guard let start = xml.range(of: "<interface name=\"\(BusRig.interface)\">") else { return [] }
        let rest = xml[start.upperBound...]
        let body = rest[..<(rest.range(of: "</interface>")?.lowerBound ?? rest.endIndex)]
        return body.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter {
                $0.hasPrefix("<method") || $0.hasPrefix("<arg") || $0.hasPrefix("<property")
                    || $0.hasPrefix("<signal")
            }
            .map { line in
                // gdbus and busctl order an element's attributes differently: compare them as sets.
                let attributes = line.split(separator: " ").dropFirst().map { $0.trimmingCharacters(in: ["/", ">"]) }
                return String(line.split(separator: " ")[0]) + " " + attributes.sorted().joined(separator: " ")
            }
    }

    @Test func aChangeArrivesAsASignalToEveryClientAndAsAnUpdateOnTheSocket() async throws {
        let rig = try BusRig()
        let daemon = try Self.daemon(on: rig)
        defer { daemon.cleanUp() }
        try await Self.waitForName(rig)
        let member = try SystemUser(prefix: "pwfb", groupNames: ["pwflags"])
        defer { member.remove() }

        let monitor = try RunningCommand(
            "/usr/bin/dbus-monitor",
            rig.monitorArguments)
        #expect(try rig.waitUntilMonitoring(monitor), "dbus-monitor never started monitoring")
        let python = try RunningCommand(
            "/usr/bin/python3", [Self.example, "--address", rig.address, "--changes", "1"], as: member)
        #expect(python.waitForLine(containing: "listening"), "the member's Python client never subscribed")
        let qt = try RunningCommand(
            try QtPrograms.busClient(), ["--address", rig.address, "--changes", "1"], as: member)
        #expect(qt.waitForLine(containing: "listening"), "the member's Qt client never subscribed")
        let socket = try daemon.connect()
        let listening = try socket.request(#"{"id":1,"method":"listen"}"#)
        #expect(listening?["result"]?["revision"] == 1)

        var changed = Fixtures.checkout
        changed.properties["button_color"] = "red"
        try daemon.writeFlags([changed, Fixtures.search])

        // The same bound as the socket's subscriber: each hears of it within the test kit's usual deadline.
        let update = socket.readJSON()
        #expect(update?["params"]?["revision"] == 2, "\(String(describing: update))")
        #expect(monitor.waitForLine(containing: "uint64 2"), "dbus-monitor saw no Changed signal")
        #expect(python.waitForLine(containing: #"new_checkout.button_color = "red""#), "python saw no change")
        #expect(qt.waitForLine(containing: #"new_checkout.button_color = "red""#), "the Qt client saw no change")
        // The removal travels in the same signal as the change.
        let signal = try RunningCommand(
            "/usr/bin/dbus-monitor",
            rig.monitorArguments)
        #expect(try rig.waitUntilMonitoring(signal), "dbus-monitor never started monitoring")
        try daemon.writeFlags([changed])
        #expect(signal.waitForLine(containing: "uint64 3"))
        #expect(signal.waitForLine(containing: #"string "search_v2""#), "the removed key is in the signal")
    }

    @Test func anOutsiderIsRefusedAndAMemberMayReadButNotControl() async throws {
        let control = try SystemGroup(prefix: "pwfc")
        defer { control.remove() }
        let rig = try BusRig()
        let daemon = try Self.daemon(on: rig, extra: "[Daemon]\nControlGroups=\(control.name)\n")
        defer { daemon.cleanUp() }
        try await Self.waitForName(rig)
        let outsider = try SystemUser(prefix: "pwfo")
        defer { outsider.remove() }
        let member = try SystemUser(prefix: "pwfm", groupNames: ["pwflags"])
        defer { member.remove() }
        let controller = try SystemUser(prefix: "pwfk", groupNames: ["pwflags", control.name])
        defer { controller.remove() }

        // The bus policy keeps the outsider out: the bus refuses, the daemon never sees the call.
        let refused = try rig.gdbus(["Get", "new_checkout"], as: outsider)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("AccessDenied: Rejected send message"), "\(refused)")

        let read = try rig.call("Get", "s", ["new_checkout"], as: member)
        #expect(read.stdout.hasPrefix("bbsa{sv}s true true"), "\(read)")
        let impression = try rig.call("LogImpression", "s", ["new_checkout"], as: member)
        #expect(impression.stdout == "si \"logged\" 0\n", "\(impression)")
        // gdbus prints the error's message (busctl only its errno's name): this refusal is the daemon's own.
        let notControl = try rig.gdbus(["SetUserId", "mallory"], as: member)
        #expect(notControl.status != 0)
        #expect(
            notControl.stderr.contains(
                "org.freedesktop.DBus.Error.AccessDenied: not permitted: SetUserId is limited to ControlGroups"),
            "\(notControl)")
        let set = try rig.call("SetUserId", "s", ["carol"], as: controller)
        #expect(set.stdout == "ss \"carol\" \"\"\n", "\(set)")
    }

    /// Sixty `SetUserId` calls with a new id each, from one python3-dbus connection: prints each answer's user
    /// id, or the error's name and message. Arguments: the bus's address, the daemon's name, path and interface.
    static let userIdLoop = """
        import dbus, sys
        address, name, path, interface = sys.argv[1:5]
        bus = dbus.bus.BusConnection(address)
        flags = dbus.Interface(bus.get_object(name, path, introspect=False), interface)
        for n in range(60):
            try:
                print("set", flags.SetUserId("user-%d" % n)[0])
            except dbus.DBusException as error:
                print("refused", error.get_dbus_name(), error.get_dbus_message())
        """

    static func userIdLoopArguments(_ rig: BusRig) -> [String] {
        ["-c", userIdLoop, rig.address, BusRig.name, BusRig.path, BusRig.interface]
    }

    /// A member looping on `SetUserId` wears the state directory's flash as one looping on the socket would: past
    /// a burst the bus answers LimitsExceeded and the user last set is kept; root is not bounded.
    @Test func aMemberLoopingOnSetUserIdIsRefusedPastTheBurst() async throws {
        let rig = try BusRig()
        let daemon = try Self.daemon(on: rig)
        defer { daemon.cleanUp() }
        try await Self.waitForName(rig)
        let member = try SystemUser(prefix: "pwfr", groupNames: ["pwflags"])
        defer { member.remove() }

        let loop = try rig.run("/usr/bin/python3", Self.userIdLoopArguments(rig), as: member)
        #expect(loop.status == 0, "\(loop)")
        let lines = loop.stdout.split(separator: "\n")
        let accepted = lines.filter { $0.hasPrefix("set ") }.map { String($0.dropFirst(4)) }
        let refused = lines.filter { $0.hasPrefix("refused ") }
        #expect(lines.count == 60, "\(loop)")
        #expect(!refused.isEmpty && accepted.count < 40, "\(accepted.count) accepted, \(refused.count) refused")
        #expect(
            refused.allSatisfy {
                $0.hasPrefix("refused org.freedesktop.DBus.Error.LimitsExceeded too many state changes")
            }, "\(refused.first ?? "")")
        let status = try #require(try daemon.connect().call("status")?["result"])
        #expect(status["userId"]?.stringValue == accepted.last, "\(status)")

        // Root is the operator: not bounded.
        let root = try rig.run("/usr/bin/python3", Self.userIdLoopArguments(rig))
        #expect(!root.stdout.contains("refused"), "\(root)")
        print("bus state write rate: of 60 SetUserId calls \(accepted.count) accepted, \(refused.count) refused")
    }

    @Test func aPolicyMistakeAloneLetsNobodyIn() async throws {
        // A policy that lets everyone call the daemon: the daemon's own check still refuses the outsider.
        let rig = try BusRig(
            extraPolicy: "<policy context=\"default\"><allow send_destination=\"\(BusRig.name)\"/></policy>")
        let daemon = try Self.daemon(on: rig)
        defer { daemon.cleanUp() }
        try await Self.waitForName(rig)
        let outsider = try SystemUser(prefix: "pwfo")
        defer { outsider.remove() }
        let refused = try rig.gdbus(["Get", "new_checkout"], as: outsider)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("AccessDenied: not permitted: reading flags is limited to"), "\(refused)")
    }

    @Test func theSocketServesWithoutABusAndTheDaemonComesBackWhenTheBusDoes() async throws {
        let rig = try BusRig(start: false)
        let daemon = try Self.daemon(on: rig)
        defer { daemon.cleanUp() }
        // No bus yet: READY=1 came, and the socket serves.
        let client = try daemon.connect()
        let get = try client.request(#"{"id":1,"method":"get","params":{"key":"new_checkout"}}"#)
        #expect(get?["result"]?["flag"]?["key"] == "new_checkout")
        let waiting = try client.request(#"{"id":2,"method":"status"}"#)?["result"]?["bus"]
        #expect(waiting?["state"] == "connecting", "\(String(describing: waiting))")
        #expect(waiting?["name"] == "io.github.pwflagsd.Flags1")
        #expect(waiting?["bus"] == "system")

        try rig.start()
        try await Self.waitForName(rig)
        #expect(try rig.call("IsEnabled", "sb", ["search_v2", "false"]).stdout == "b true\n")
        let serving = try client.request(#"{"id":3,"method":"status"}"#)?["result"]?["bus"]
        #expect(serving?["state"] == "serving", "\(String(describing: serving))")
        #expect(serving?["reason"] == .null)

        // The bus restarts (here: dies and comes back): the daemon reconnects by itself.
        rig.stop()
        try rig.start()
        try await Self.waitForName(rig)
        #expect(try rig.call("IsEnabled", "sb", ["search_v2", "false"]).stdout == "b true\n")
        #expect(daemon.log.contains("lost the system bus; reconnecting"), "\(daemon.log)")
    }
}
