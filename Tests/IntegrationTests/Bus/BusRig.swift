import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The two system buses Debian ships.
enum BusKind: String, CustomStringConvertible, CaseIterable, Sendable {
    case dbusDaemon = "dbus-daemon"
    case dbusBroker = "dbus-broker"

    var description: String { rawValue }
}

/// A private message bus for one test: Debian's `dbus-daemon` (or `dbus-broker`) with the system bus's default
/// policy and the policy file the package installs (`systemd/dbus/`), on a socket in a temporary directory.
final class BusRig {
    static let name = "io.github.pwflagsd.Flags1"
    static let path = "/io/github/pwflagsd/Flags1"
    static let interface = "io.github.pwflagsd.Flags1"
    /// The shipped policy, introspection and activation files.
    static let dbusDirectory = Repository.path("systemd/dbus")

    let directory: TemporaryDirectory
    let socketPath: String
    private(set) var process: Process?
    private let extraPolicy: String
    let kind: BusKind

    /// The address clients and the daemon use.
    var address: String { "unix:path=\(socketPath)" }

    /// A bus whose configuration adds `extraPolicy` (a `<policy>` element) after the shipped file; with `start`
    /// false, only the configuration is written (the daemon then starts before its bus).
    init(_ kind: BusKind = .dbusDaemon, extraPolicy: String = "", start: Bool = true) throws {
        self.kind = kind
        directory = try TemporaryDirectory(prefix: "pwbus")
        // Other users' clients must reach the socket.
        chmod(directory.path, 0o755)
        socketPath = directory.file("system_bus_socket")
        self.extraPolicy = extraPolicy
        // The policy names the package's user and group: a bus resolves them when it reads it, so they must
        // exist first (on a fresh machine the first rig came before the first daemon made the user, and the
        // daemon could not own its name).
        _ = try SystemGroup.ensure("pwflags")
        _ = try SystemUser.ensureSystemUser(BusTests.daemonUser)
        try configuration.write(toFile: directory.file("bus.conf"), atomically: true, encoding: .utf8)
        if start { try self.start() }
    }

    deinit {
        stop()
        directory.remove()
    }

    /// Starts the bus; returns once it listens (it prints its address when it does).
    func start() throws {
        // A missing bus fails here, by name, rather than as a daemon that never owns its name.
        let program = kind == .dbusDaemon ? "/usr/bin/dbus-daemon" : "/usr/bin/dbus-broker-launch"
        guard access(program, X_OK) == 0 else { throw BusRigError.missing(program) }
        let process = Process()
        switch kind {
        case .dbusDaemon:
            process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
            process.arguments = ["--config-file=\(directory.file("bus.conf"))", "--nofork", "--print-address"]
        case .dbusBroker:
            // dbus-broker-launch, the controller Debian runs as dbus.service, without systemd: a private mount
            // namespace gives it the journal socket it insists on, and the script hands it the listening socket
            // as systemd's socket activation would (it ignores <listen>).
            process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
            process.arguments = [
                "--mount", "--propagation", "private", "/bin/sh", "-c",
                "mount -t tmpfs tmpfs /run/systemd && mkdir /run/systemd/journal && exec /usr/bin/python3 -c \"$0\" \"$@\"",
                Self.brokerLauncher, socketPath, directory.file("bus.conf"),
            ]
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        let reader = LineReader(fd: output.fileHandleForReading.fileDescriptor)
        guard let line = reader.readLine(timeout: .seconds(10)), line.hasPrefix("unix:path=\(socketPath)") else {
            stop()
            throw BusRigError.notStarted
        }
    }

    /// Ends the bus (SIGKILL: a crash, as far as the daemon can tell) and waits for it.
    func stop() {
        guard let process, process.isRunning else { return }
        // dbus-broker's launcher script leads a process group of its own: the launcher and the broker end with it.
        if kind == .dbusBroker { kill(-process.processIdentifier, SIGKILL) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
        unlink(socketPath)
    }

    /// The environment that points a daemon at this bus as its system bus.
    var daemonEnvironment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": address] }

    /// `busctl ARGS` on this bus, as root or as `user`.
    func busctl(_ arguments: [String], as user: SystemUser? = nil) throws -> CLI.Outcome {
        try run("/usr/bin/busctl", ["--address=\(address)"] + arguments, as: user)
    }

    /// `busctl call` of a method of the daemon's interface.
    func call(_ method: String, _ signature: String = "", _ values: [String] = [], as user: SystemUser? = nil)
        throws -> CLI.Outcome
    {
        let arguments = ["call", Self.name, Self.path, Self.interface, method]
        return try busctl(arguments + (signature.isEmpty ? [] : [signature] + values), as: user)
    }

    /// `gdbus call` of `arguments[0]`, a method of the daemon's interface, with the rest as its arguments.
    func gdbus(_ arguments: [String], as user: SystemUser? = nil) throws -> CLI.Outcome {
        let call = ["call", "--address", address, "-d", Self.name, "-o", Self.path, "-m"]
        return try run("/usr/bin/gdbus", call + ["\(Self.interface).\(arguments[0])"] + arguments.dropFirst(), as: user)
    }

    /// `dbus-monitor`'s arguments for the daemon's Changed signals (sent by the name's owner, as docs/dbus.md
    /// says to match them), and for the probe `waitUntilMonitoring` sends.
    var monitorArguments: [String] {
        [
            "--address", address, "type='signal',sender='\(Self.name)',interface='\(Self.interface)',member='Changed'",
            "type='signal',interface='\(Self.probeInterface)'",
        ]
    }

    static let probeInterface = "io.github.pwflagsd.Test"

    /// Returns once `monitor` prints a probe signal sent after it started: from then on it sees every signal
    /// (a monitor prints nothing of its own when it is ready). False when `timeout` passed first.
    func waitUntilMonitoring(_ monitor: RunningCommand, timeout: Duration = .seconds(10)) throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            _ = try busctl(["emit", "/probe", Self.probeInterface, "Probe"])
            if monitor.waitForLine(containing: "member=Probe", timeout: .milliseconds(200)) { return true }
        }
        return false
    }

    /// Runs `executable` as root or as `user`.
    func run(_ executable: String, _ arguments: [String], as user: SystemUser? = nil) throws -> CLI.Outcome {
        if let user { return try user.run(executable, arguments) }
        return try Command.run(executable, arguments, check: false)
    }

    /// Starts `dbus-broker-launch` on a listening socket, as systemd's socket activation does, and reads its
    /// journal lines (to stderr); prints the address once the socket listens. Arguments: the socket's path and
    /// the configuration file.
    static let brokerLauncher = """
        import os, socket, sys, threading
        path, config = sys.argv[1], sys.argv[2]
        try:
            os.setsid()
        except OSError:
            pass
        journal = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        journal.bind("/run/systemd/journal/socket")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        os.chmod(path, 0o666)
        listener.listen(128)
        pid = os.fork()
        if pid == 0:
            os.dup2(listener.fileno(), 3)
            os.environ.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()), DBUS_SYSTEM_BUS_ADDRESS="unix:path=" + path)
            os.execv("/usr/bin/dbus-broker-launch", ["dbus-broker-launch", "--scope", "system", "--config-file", config])
        listener.close()
        print("unix:path=" + path, flush=True)
        def sink():
            while True:
                sys.stderr.write(journal.recv(65536).decode(errors="replace").replace("\\n", " ") + "\\n")
        threading.Thread(target=sink, daemon=True).start()
        os.waitpid(pid, 0)
        """

    /// The system bus's default policy (Debian's `system.conf`) and the shipped policy file.
    private var configuration: String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>unix:path=\(socketPath)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <deny own="*"/>
            <deny send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_requested_reply="true" send_type="method_return"/>
            <allow send_requested_reply="true" send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
            <allow receive_type="signal"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Peer"/>
          </policy>
          <include>\(Self.dbusDirectory)/\(Self.name).conf</include>
          \(extraPolicy)
        </busconfig>
        """
    }
}

enum BusRigError: Error, CustomStringConvertible {
    case notStarted
    case missing(String)

    var description: String {
        switch self {
        case .notStarted: "the bus did not print its address within 10 s"
        case .missing(let program): "\(program) is missing (apt-get install dbus dbus-broker)"
        }
    }
}

/// A command that keeps running (`dbus-monitor`, a Python listener), its stdout read line by line.
final class RunningCommand {
    let process: Process
    private let reader: LineReader
    private let output = Pipe()

    /// Runs `executable`, as `user` when given, its stdout line-buffered (`stdbuf`: `dbus-monitor` would
    /// otherwise hold its lines in a pipe's full buffer).
    init(_ executable: String, _ arguments: [String], as user: SystemUser? = nil) throws {
        process = Process()
        let command = ["/usr/bin/stdbuf", "-oL", executable] + arguments
        if let user {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(user.name)", "--regid=\(user.name)", "--init-groups", "--"] + command
        } else {
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
        }
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        process.environment = environment
        reader = LineReader(fd: output.fileHandleForReading.fileDescriptor)
        try process.run()
    }

    deinit {
        stop()
    }

    /// Reads lines until one contains `text`; false when the output ended or `timeout` passed first.
    func waitForLine(containing text: String, timeout: Duration = .seconds(10)) -> Bool {
        lines(through: text, timeout: timeout) != nil
    }

    /// Reads lines until one contains `text` and returns them all, that one last; nil when the output ended or
    /// `timeout` passed first.
    func lines(through text: String, timeout: Duration = .seconds(10)) -> [String]? {
        let deadline = ContinuousClock.now + timeout
        var lines: [String] = []
        while ContinuousClock.now < deadline {
            guard let line = reader.readLine(timeout: deadline - ContinuousClock.now) else { return nil }
            lines.append(line)
            if line.contains(text) { return lines }
        }
        return nil
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
