public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How a test expects a daemon it started to end. Anything else (and any sanitizer report in the daemon's log,
/// whatever was expected) fails the test.
public enum ExpectedExit: Sendable, Equatable, CustomStringConvertible {
    /// Exit status 0: a daemon stopped with SIGTERM, or one that ended on its own with success.
    case clean
    /// A non-zero exit status the test provoked (a configuration the daemon refuses, a socket already taken).
    case status(Int32)
    /// Killed by a signal the test sent itself (SIGKILL in the crash tests).
    case signal(Int32)

    public var description: String {
        switch self {
        case .clean: "exit status 0"
        case .status(let status): "exit status \(status)"
        case .signal(let number): "killed by signal \(number)"
        }
    }
}

/// How a daemon process ended, as `Process` saw it.
public struct DaemonEnding: Sendable, Equatable, CustomStringConvertible {
    /// True for a normal exit, false for a signal.
    public var exited: Bool
    /// The exit status, or the signal's number.
    public var status: Int32
    /// True when the test kit had to SIGKILL the daemon because SIGTERM did not end it.
    public var forced: Bool

    init(_ process: Process, forced: Bool) {
        exited = process.terminationReason == .exit
        status = process.terminationStatus
        self.forced = forced
    }

    public var description: String {
        if forced { return "did not exit on SIGTERM within its timeout and was killed with SIGKILL" }
        return exited ? "exit status \(status)" : "killed by signal \(status)"
    }

    func matches(_ expected: ExpectedExit) -> Bool {
        guard !forced else { return false }
        switch expected {
        case .clean: return exited && status == 0
        case .status(let wanted): return exited && status == wanted
        case .signal(let number): return !exited && status == number
        }
    }
}

/// The one check every daemon a test starts goes through when it is stopped: its exit must be the one the test
/// expects, and its log must hold no sanitizer report (LeakSanitizer writes its report to stderr, the daemon's
/// log, at exit; `Tests/lsan-suppressions.txt` is the one list of accepted leaks).
///
/// A failure is recorded as an issue of the running test (through the hook TestSupport exports, found at run
/// time so that the bench and soak, which link this kit without Swift Testing, need none; they get the report on
/// stderr), the log is printed with it, and the daemon's directory is kept so the log can be read again.
public enum DaemonExitCheck {
    /// Lines a sanitizer starts its report with.
    static let sanitizerMarkers = [
        "ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "WARNING: ThreadSanitizer", "ERROR: ThreadSanitizer",
        "runtime error:",
    ]

    /// The longest stretch of a log a failure prints (its end, where an exit-time report is).
    static let printedLogLimit = 64 * 1024

    /// SIGTERM, then the exit status; SIGKILL after `timeout` (the ending then says so).
    public static func terminate(_ process: Process, timeout: Duration = .seconds(20)) -> DaemonEnding {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            if !waitForExit(process, timeout: timeout) {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return DaemonEnding(process, forced: true)
            }
        }
        process.waitUntilExit()
        return DaemonEnding(process, forced: false)
    }

    /// Waits for `process` to end; false after `timeout`. Not cut short by a cancelled task: `terminate` waits here
    /// for a daemon's clean stop, which a test past its time limit still owes its next test.
    public static func waitForExit(_ process: Process, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { return false }
            usleep(5_000)
        }
        return true
    }

    /// What is wrong with `ending` and the log at `logPath`, or nil when nothing is.
    public static func problem(_ ending: DaemonEnding, expected: ExpectedExit, logPath: String) -> String? {
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        var problems: [String] = []
        if !ending.matches(expected) { problems.append("pwflagsd \(ending), expected \(expected)") }
        if let marker = sanitizerMarkers.first(where: { log.contains($0) }) {
            problems.append("its log holds a sanitizer report (\(marker))")
        }
        guard !problems.isEmpty else { return nil }
        let shown = log.utf8.count > printedLogLimit ? "…" + String(log.suffix(printedLogLimit)) : log
        return problems.joined(separator: "; ") + "; log kept at \(logPath):\n" + shown
    }

    /// Checks `ending` and the log; records the problem as a test failure and returns false when there is one.
    @discardableResult
    public static func verify(_ ending: DaemonEnding, expected: ExpectedExit, logPath: String) -> Bool {
        guard let problem = problem(ending, expected: expected, logPath: logPath) else { return true }
        report(problem)
        return false
    }

    /// The symbol TestSupport exports (`@_cdecl`) to record an issue in the running test.
    static let hookName = "pwflags_test_kit_record_issue"

    /// Records `message` as a failure of the running test, or writes it to stderr outside the tests.
    static func report(_ message: String) {
        typealias Hook = @convention(c) (UnsafePointer<CChar>) -> Void
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), hookName) {
            message.withCString { unsafeBitCast(symbol, to: Hook.self)($0) }
        } else {
            FileHandle.standardError.write(Data("pwflagsd test kit: \(message)\n".utf8))
        }
    }
}
