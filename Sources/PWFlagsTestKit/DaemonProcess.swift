public import Foundation
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The real `pwflagsd` binary, started on a temporary socket with a configuration the test writes, and known
/// to be ready when it sends `READY=1` to a fake `NOTIFY_SOCKET`.
public final class DaemonProcess: @unchecked Sendable {
    public let directory: TemporaryDirectory
    public let socketPath: String
    public let configPath: String
    public let logPath: String
    public let notify: NotifySocket
    public let process: Process
    private let exit = ExitStatus()
    private let checks = Locked(ExitChecks())

    /// The folder holding the package's built products: `PWFLAGS_PRODUCTS` when set (CI points it at the static
    /// release build to run the shared-device suites against the shipped binaries), else the one next to the
    /// running test bundle.
    public static var productsDirectory: URL {
        if let products = ProcessInfo.processInfo.environment["PWFLAGS_PRODUCTS"], !products.isEmpty {
            return URL(fileURLWithPath: products, isDirectory: true)
        }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        // swift test runs `…/debug/pwflagsdPackageTests.xctest`; some runners go through a nested bundle.
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("pwflagsd").path),
            directory.path != "/"
        {
            directory = directory.deletingLastPathComponent()
        }
        return directory
    }

    /// Whether the products are a release build (SwiftPM names the folder after the configuration): the build a
    /// device runs, against which a test may hold a bound on time that a debug build's unoptimized code misses.
    public static var isReleaseBuild: Bool { productsDirectory.lastPathComponent == "release" }

    /// A launcher that has the kernel send the daemon SIGTERM when the thread that started it ends (util-linux
    /// `setpriv --pdeathsig`; empty where there is no setpriv). The bench and soak start their daemons from the
    /// main thread with it, so a bench killed with SIGKILL (a timeout) does not leave its daemons running; the
    /// tests do not, since a test's thread may end before its daemon should.
    public static var parentDeathLauncher: [String] {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
            ? ["/usr/bin/setpriv", "--pdeathsig", "TERM", "--"] : []
    }

    /// The sanitizer settings a daemon runs with. Under AddressSanitizer the test runner's own exit-time leaks
    /// (Foundation, libcurl) are not checked, but the daemon's are: CI gives the daemon its own ASan options
    /// (`PWFLAGS_DAEMON_ASAN_OPTIONS`), which replace the runner's `ASAN_OPTIONS`; the suppression files'
    /// settings pass as they are.
    public static var sanitizerEnvironment: [String: String] {
        let environment = ProcessInfo.processInfo.environment
        var settings: [String: String] = [:]
        for name in ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"] {
            settings[name] = environment[name]
        }
        if let daemonOptions = environment["PWFLAGS_DAEMON_ASAN_OPTIONS"] { settings["ASAN_OPTIONS"] = daemonOptions }
        return settings
    }

    /// The path of a built executable of the package.
    public static func executable(_ name: String) -> String {
        productsDirectory.appendingPathComponent(name).path
    }

    /// Writes `config` (the `[Daemon]` socket and state lines are added unless `addDefaults` is false, and so is
    /// `[DBus] Bus=no` unless `config` has a `[DBus]` section: a test daemon stays off the machine's bus) and
    /// starts the daemon; returns once it sent `READY=1`. `launcher` is a command that execs the daemon (such
    /// as `setpriv` with its options and `--`).
    public init(
        config: String = "",
        directory: TemporaryDirectory? = nil,
        addDefaults: Bool = true,
        arguments: [String] = [],
        environment: [String: String] = [:],
        stderrIsJournal: Bool = false,
        waitForReady: Bool = true,
        launcher: [String] = []
    ) throws {
        BrokenPipe.ignore()
        let directory = try directory ?? TemporaryDirectory()
        self.directory = directory
        socketPath = directory.file("d.sock")
        configPath = directory.file("pwflagsd.conf")
        logPath = directory.file("daemon.log")
        var text = config
        if addDefaults {
            text += "\n[Daemon]\nSocketPath=\(socketPath)\nStateDirectory=\(directory.file("state"))\n"
            if !text.contains("[DBus]") { text += "[DBus]\nBus=no\n" }
        }
        try text.write(toFile: configPath, atomically: true, encoding: .utf8)
        notify = try NotifySocket(path: directory.file("notify-\(UUID().uuidString.prefix(8)).sock"))

        process = Process()
        // A launcher (`setpriv … --`) execs the daemon in its own process: the pid stays the daemon's.
        let command = launcher + [Self.executable("pwflagsd"), "--config", configPath] + arguments
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        var env = ProcessInfo.processInfo.environment
        env["NOTIFY_SOCKET"] = notify.path
        env.merge(Self.sanitizerEnvironment) { _, daemon in daemon }
        for (key, value) in environment { env[key] = value }
        process.environment = env
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        if stderrIsJournal {
            // What systemd sets when stderr is the journal: the device and inode of that stream.
            var info = stat()
            guard stat(logPath, &info) == 0 else { throw CocoaError(.fileReadUnknown) }
            env["JOURNAL_STREAM"] = "\(info.st_dev):\(info.st_ino)"
            process.environment = env
        }
        process.standardOutput = FileHandle.nullDevice
        let exit = self.exit
        process.terminationHandler = { finished in exit.status.withLock { $0 = finished.terminationStatus } }
        try process.run()
        TerminationSignals.adopt(self)
        if waitForReady {
            guard notify.waitFor("READY=1") != nil else {
                process.terminate()
                throw DaemonProcessError.notReady(log: log)
            }
        }
    }

    /// Everything the daemon wrote to stderr so far.
    public var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    public var isRunning: Bool { exit.status.withLock { $0 == nil } }

    /// Sends a signal.
    public func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the process to exit and returns its status; nil after `timeout`, or at once when the calling
    /// task is cancelled (a test past its time limit).
    public func waitForExit(timeout: Duration = .seconds(20)) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, !Task.isCancelled {
            if let status = exit.status.withLock({ $0 }) { return status }
            usleep(5_000)
        }
        return nil
    }

    /// How the test expects this daemon to end (`.clean` unless it says otherwise); `stop()` and `cleanUp()`
    /// check the exit against it.
    public var expectedExit: ExpectedExit {
        get { checks.withLock { $0.expected } }
        set { checks.withLock { $0.expected = newValue } }
    }

    /// SIGTERM, then wait for the exit status; SIGKILL if it does not come. The exit and the log are then
    /// checked (`DaemonExitCheck`): a status other than `expecting` (by default `expectedExit`), a daemon that
    /// needed SIGKILL, or a sanitizer report fails the running test. Returns the exit status, nil when the
    /// daemon had to be killed.
    @discardableResult
    public func stop(expecting expected: ExpectedExit? = nil) -> Int32? {
        TerminationSignals.release(self)
        let ending = DaemonExitCheck.terminate(process)
        let (first, wanted) = checks.withLock { checks in
            defer { checks.done = true }
            return (!checks.done, expected ?? checks.expected)
        }
        // Checked once: a test that stops the daemon and later cleans up is not told twice.
        if first, !DaemonExitCheck.verify(ending, expected: wanted, logPath: logPath) {
            checks.withLock { $0.failed = true }
        }
        if ending.forced { return nil }
        return exit.status.withLock { $0 } ?? process.terminationStatus
    }

    /// Stops the daemon (checking its exit as `stop` does) and removes its directory, unless the check failed:
    /// then the directory stays, so that its log can be read.
    public func cleanUp(expecting expected: ExpectedExit? = nil) {
        stop(expecting: expected)
        if !checks.withLock({ $0.failed }) { directory.remove() }
    }
}

public enum DaemonProcessError: Error, CustomStringConvertible {
    case notReady(log: String)

    public var description: String {
        switch self {
        case .notReady(let log): "pwflagsd did not send READY=1; its log:\n\(log)"
        }
    }
}

/// What the test expects of the daemon's exit, and whether it was checked.
private struct ExitChecks {
    var expected = ExpectedExit.clean
    var done = false
    var failed = false
}

/// The exit status, set by the termination handler on another thread.
private final class ExitStatus: Sendable {
    let status = Locked<Int32?>(nil)
}
