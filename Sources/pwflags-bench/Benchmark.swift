import FlagsCore
import Foundation
import PWFlagsTestKit
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The measurements of docs/performance.md, each against its floor or baseline in the same run.
struct Benchmark {
    let extent: Extent
    let report: Report
    let directory: TemporaryDirectory

    /// The request every load sends: a `get` of a flag that exists.
    static let getRequest = Array(#"{"id":1,"method":"get","params":{"key":"flag_7"}}"#.utf8) + [0x0A]

    /// A daemon on a local file of `count` flags; `extra` goes into its configuration.
    func localDaemon(
        flags count: Int, name: String, extra: String = "", environment: [String: String] = [:]
    ) throws -> DaemonProcess {
        let folder = try TemporaryDirectory(prefix: "pwb")
        try folder.write("flags.json", Measure.flagsFile(Measure.flags(count)))
        return try DaemonProcess(
            config: """
                [FeatureFlags]
                LocalFlagsFile=\(folder.file("flags.json"))
                [Daemon]
                MaxConnections=8192
                LogLevel=warning
                \(extra)
                """,
            directory: folder,
            environment: environment,
            launcher: DaemonProcess.parentDeathLauncher
        )
    }

    // MARK: 1. Sequential get against the floor

    func sequentialGet(
        daemon: DaemonProcess, echo: EchoServer, epollEcho: EchoServer, processEcho: EchoProcess
    ) throws {
        let count = extent.pick(full: 20_000, quick: 5_000, smoke: 200)
        let section = "get, 1 client, sequential (\(count) calls)"
        var mine = try Load.sequential(path: daemon.socketPath, request: Self.getRequest, count: count)
        var floor = try Load.sequential(path: processEcho.path, request: Self.getRequest, count: count)
        var inProcess = try Load.sequential(path: echo.path, request: Self.getRequest, count: count)
        var epollFloor = try Load.sequential(path: epollEcho.path, request: Self.getRequest, count: count)
        let p50 = Measure.percentile(&mine, 50) / 1000
        let p99 = Measure.percentile(&mine, 99) / 1000
        let floorP50 = Measure.percentile(&floor, 50) / 1000
        let floorP99 = Measure.percentile(&floor, 99) / 1000
        report.add(section, "pwflagsd p50", p50, "µs")
        report.add(section, "pwflagsd p99", p99, "µs")
        report.add(section, "pwflagsd calls/s", Double(mine.count) / (Double(mine.reduce(0, +)) / 1e9), "1/s")
        report.add(section, "echo floor p50", floorP50, "µs")
        report.add(section, "echo floor p99", floorP99, "µs")
        report.add(section, "echo floor calls/s", Double(floor.count) / (Double(floor.reduce(0, +)) / 1e9), "1/s")
        report.add(section, "p50 ratio to floor", p50 / floorP50, "x", target: "≤ 1.5", met: p50 / floorP50 <= 1.5)
        report.add(section, "p99 ratio to floor", p99 / floorP99, "x", target: "≤ 3", met: p99 / floorP99 <= 3)
        // Two more echoes that split the distance: inside the benchmark's process (no address-space switch),
        // and built like pwflagsd's loop (epoll, one thread) but doing nothing.
        report.add(
            section, "echo thread in the benchmark's process p50", Measure.percentile(&inProcess, 50) / 1000, "µs")
        report.add(
            section, "epoll echo thread (pwflagsd's design, no work) p50", Measure.percentile(&epollFloor, 50) / 1000,
            "µs")
    }

    // MARK: 2. Pipelined throughput against the floor

    func throughput(daemon: DaemonProcess, echo: EchoServer, processEcho: EchoProcess) throws {
        let perClient = extent.pick(full: 5_000, quick: 1_000, smoke: 64)
        for clients in [1, 4, 16, 64] {
            let section = "get throughput, \(clients) clients × 32 in flight"
            let mine = try Load.pipelined(
                path: daemon.socketPath, request: Self.getRequest, clients: clients, depth: 32, perClient: perClient)
            let floor = try Load.pipelined(
                path: processEcho.path, request: Self.getRequest, clients: clients, depth: 32, perClient: perClient)
            report.add(section, "pwflagsd calls/s", mine, "1/s")
            report.add(section, "echo floor calls/s", floor, "1/s")
            let ratio = mine / floor
            if clients == 16 {
                report.add(section, "ratio to floor", ratio, "x", target: "≥ 0.5", met: ratio >= 0.5)
            } else {
                report.add(section, "ratio to floor", ratio, "x")
            }
        }
    }

    // MARK: 5. Scale

    func scale() throws {
        let sizes = [10, 1_000, 10_000]
        for size in sizes {
            let daemon = try localDaemon(flags: size, name: "scale\(size)")
            defer { daemon.cleanUp() }
            let client = try LineClient(path: daemon.socketPath)
            let repeats =
                size >= 10_000
                ? extent.pick(full: 50, quick: 10, smoke: 2) : extent.pick(full: 500, quick: 100, smoke: 5)
            let section = "scale, \(size) flags"
            let getAll = Array(#"{"id":1,"method":"getAll"}"#.utf8) + [0x0A]
            var bytes = 0
            var start = MonotonicClock.nanoseconds()
            for _ in 0..<repeats {
                try client.send(getAll)
                bytes = client.readLine() ?? 0
            }
            report.add(
                section, "getAll time", Double(MonotonicClock.nanoseconds() - start) / Double(repeats) / 1000, "µs")
            report.add(section, "getAll bytes", Double(bytes + 1), "B")
            start = MonotonicClock.nanoseconds()
            for index in 0..<repeats {
                try client.send(Array(#"{"id":1,"method":"listen"}"#.utf8) + [0x0A])
                bytes = client.readLine() ?? 0
                try client.send(
                    Array(#"{"id":2,"method":"unlisten","params":{"subscription":"s\#(index + 1)"}}"#.utf8) + [0x0A])
                client.readLine()
            }
            report.add(
                section, "listen snapshot time", Double(MonotonicClock.nanoseconds() - start) / Double(repeats) / 1000,
                "µs")
            report.add(section, "listen snapshot bytes", Double(bytes + 1), "B")
        }
    }

    func memory() throws {
        do {
            let daemon = try localDaemon(flags: 1_000, name: "idle")
            defer { daemon.cleanUp() }
            _ = try Load.sequential(path: daemon.socketPath, request: Self.getRequest, count: 1_000)
            let (rss, anon) = Measure.memory(of: daemon.process.processIdentifier)
            let section = "memory, idle, 1,000 flags"
            report.add(section, "RssAnon", anon / 1024, "MiB", target: "≤ 8", met: anon / 1024 <= 8)
            report.add(section, "VmRSS", rss / 1024, "MiB", target: "≤ 16", met: rss / 1024 <= 16)
        }
        let daemon = try localDaemon(flags: 10_000, name: "load")
        defer { daemon.cleanUp() }
        let section = "memory, 10,000 flags, 1,000 subscribers, under load"
        let subscribers = try subscribe(1_000, to: daemon.socketPath)
        _ = try Load.pipelined(
            path: daemon.socketPath, request: Self.getRequest, clients: 16, depth: 32,
            perClient: extent.pick(full: 2_000, quick: 500, smoke: 32))
        try daemon.directory.write("flags.json", Measure.flagsFile(Measure.flags(10_000, variant: 1)))
        _ = Load.waitForLine(on: subscribers)
        let (rss, anon) = Measure.memory(of: daemon.process.processIdentifier)
        // Read as soon as every subscriber has the change (docs/performance.md, memory under load).
        report.add(section, "RssAnon", anon / 1024, "MiB", target: "≤ 34", met: anon / 1024 <= 34)
        report.add(section, "RSS", rss / 1024, "MiB")
    }

    // MARK: Startup

    /// Exec to READY=1 with a warm disk cache, against a minimal Swift program's exec to exit.
    ///
    /// Every process is started with `posix_spawn` and reaped with `waitpid`: Foundation's `waitUntilExit`
    /// notices an exit tens of milliseconds late, which once hid the floor under its own latency.
    func startup(benchPath: String) throws {
        let runs = extent.pick(full: 15, quick: 5, smoke: 1)
        let directory = URL(fileURLWithPath: benchPath).deletingLastPathComponent().path
        let floor = Self.medianExecToExit(directory + "/pwflags-bench-floor", [], runs: runs)
        report.add("startup", "minimal Swift program (pwflags-bench-floor), exec to exit", floor, "ms")
        // The same with libsystemd and its libraries mapped at exec, as linking it maps them in pwflagsd.
        let withSystemd = Self.medianExecToExit(
            directory + "/pwflags-bench-floor", [], environment: ["LD_PRELOAD": "libsystemd.so.0"], runs: runs)
        report.add("startup", "the same with libsystemd loaded, exec to exit", withSystemd, "ms")
        // What loading the daemon's binary and libraries costs before it does anything.
        let version = Self.medianExecToExit(DaemonProcess.executable("pwflagsd"), ["--version"], runs: runs)
        report.add("startup", "pwflagsd --version, exec to exit", version, "ms")
        let baselineMedian = floor
        for size in [0, 1_000, 10_000] {
            var samples: [UInt64] = []
            var answers: [UInt64] = []
            for _ in 0..<runs {
                let folder = try TemporaryDirectory(prefix: "pwb")
                defer { folder.remove() }
                try FileManager.default.createDirectory(atPath: folder.file("state"), withIntermediateDirectories: true)
                let cache: JSONValue = [
                    "format": 1, "applicationCode": "BENCH-00001", "userId": "bench",
                    "fetchedAt": .number(Date().timeIntervalSince1970),
                    "response": [
                        "flags": .array(
                            Measure.flags(size).map {
                                [
                                    "key": .string($0.key), "enabled": .bool($0.isEnabled),
                                    "rule_id": .string($0.ruleId),
                                    "properties": .object($0.properties),
                                ]
                            })
                    ],
                ]
                try cache.serialized().write(
                    toFile: folder.file("state/flags-cache.json"), atomically: true, encoding: .utf8)
                // Port 9 refuses at once: the start must not wait for the network either way.
                try folder.write(
                    "pwflagsd.conf",
                    """
                    [Pushwoosh]
                    ApplicationCode=BENCH-00001
                    ServerURL=http://127.0.0.1:9/json/1.3/
                    HWID=bench
                    [Daemon]
                    LogLevel=warning
                    SocketPath=\(folder.file("d.sock"))
                    StateDirectory=\(folder.file("state"))
                    """)
                let notify = try NotifySocket(path: folder.file("notify.sock"))
                // Spawned as the floor is, so that both figures carry the same cost of starting a process.
                let command = SpawnCommand(
                    DaemonProcess.executable("pwflagsd"), ["--config", folder.file("pwflagsd.conf")],
                    environment: ["NOTIFY_SOCKET": notify.path])
                let start = MonotonicClock.nanoseconds()
                let pid = try command.start()
                defer { SpawnCommand.stop(pid) }
                guard notify.waitFor("READY=1") != nil else {
                    throw SystemError("pwflagsd: no READY=1", errno: ETIMEDOUT)
                }
                samples.append(MonotonicClock.nanoseconds() - start)
                // The first answer a client gets, from the cached flags.
                _ = try SocketSession(socketPath: folder.file("d.sock")).result("get", ["key": "flag_1"])
                answers.append(MonotonicClock.nanoseconds() - start)
            }
            let median = Measure.percentile(&samples, 50) / 1e6
            report.add("startup", "exec to READY=1, \(size) cached flags", median, "ms")
            let ratio = median / baselineMedian
            if size == 1_000 {
                report.add("startup", "ratio, \(size) flags", ratio, "x", target: "≤ 2", met: ratio <= 2)
            } else {
                report.add("startup", "ratio, \(size) flags", ratio, "x")
            }
            report.add(
                "startup", "exec to the first get answered, \(size) cached flags",
                Measure.percentile(&answers, 50) / 1e6, "ms")
        }
    }

    /// The median time from `posix_spawn` to `waitpid` of `path` with `arguments`, its output discarded, in ms.
    static func medianExecToExit(
        _ path: String, _ arguments: [String], environment: [String: String] = [:], runs: Int
    ) -> Double {
        let command = SpawnCommand(path, arguments, environment: environment)
        var samples: [UInt64] = []
        for _ in 0..<runs {
            let start = MonotonicClock.nanoseconds()
            guard let pid = try? command.start() else { return .nan }
            SpawnCommand.wait(pid)
            samples.append(MonotonicClock.nanoseconds() - start)
        }
        return Measure.percentile(&samples, 50) / 1e6
    }
}

/// A command ready for `posix_spawn`: its argument and environment vectors are built once, before any timing,
/// so a figure counts starting the process and nothing of the bench's own.
final class SpawnCommand {
    private let path: String
    private let argv: [UnsafeMutablePointer<CChar>?]
    private let envp: [UnsafeMutablePointer<CChar>?]

    /// `path` with `arguments`, in this process's environment with `environment` added.
    init(_ path: String, _ arguments: [String], environment: [String: String] = [:]) {
        self.path = path
        argv = ([path] + arguments).map { strdup($0) } + [nil]
        let settings = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        envp = settings.map { strdup("\($0.key)=\($0.value)") } + [nil]
    }

    deinit {
        for pointer in argv + envp { free(pointer) }
    }

    /// Starts the command, its stdout to /dev/null.
    func start() throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard result == 0 else { throw SystemError("posix_spawn \(path)", errno: result) }
        return pid
    }

    /// Waits for the process to end.
    static func wait(_ pid: pid_t) {
        var status: Int32 = 0
        _ = try? syscall("waitpid") { waitpid(pid, &status, 0) }
    }

    /// SIGTERM, then waits for the process to end.
    static func stop(_ pid: pid_t) {
        kill(pid, SIGTERM)
        wait(pid)
    }
}
