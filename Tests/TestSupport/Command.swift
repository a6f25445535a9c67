import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a system command to completion, output to files (never a pipe that could fill up).
public enum Command {
    /// A command that failed when it had to succeed.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `executable arguments…`; with `check`, a non-zero exit throws.
    @discardableResult
    public static func run(
        _ executable: String,
        _ arguments: [String],
        check: Bool = true,
        timeout: Duration = .seconds(30)
    ) throws -> CLI.Outcome {
        let outcome: CLI.Outcome
        do {
            outcome = try finish(executable, arguments, environment: nil, timeout: timeout)
        } catch is CLIError {
            throw Failure(description: "\(executable) \(arguments.joined(separator: " ")) did not finish in time")
        }
        if check, outcome.status != 0 {
            throw Failure(description: "\(executable) \(arguments.joined(separator: " ")): \(outcome)")
        }
        return outcome
    }

    /// Runs `executable arguments…` with its output in files and no input, killing it after `timeout`; throws
    /// `CLIError.timedOut` then. `environment` nil: the test's own.
    static func finish(
        _ executable: String, _ arguments: [String], environment: [String: String]?, timeout: Duration
    ) throws -> CLI.Outcome {
        let directory = try TemporaryDirectory(prefix: "pwcmd")
        defer { directory.remove() }
        let stdoutPath = directory.file("stdout")
        let stderrPath = directory.file("stderr")
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { usleep(2_000) }
        if process.isRunning {
            // SIGKILL: the child may have inherited a mask that blocks SIGTERM (see RunningCLI.stop).
            kill(process.processIdentifier, SIGKILL)
            throw CLIError.timedOut(arguments)
        }
        process.waitUntilExit()
        return CLI.Outcome(
            status: process.terminationStatus,
            stdout: (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        )
    }
}
