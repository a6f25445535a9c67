import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the built `pwflags` binary and collects its exit status and output.
public enum CLI {
    /// What one run of the CLI printed and returned.
    public struct Outcome: Sendable, CustomStringConvertible {
        public var status: Int32
        public var stdout: String
        public var stderr: String

        public var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
    }

    /// Runs `pwflags arguments…` (or another built `executable`) to completion.
    ///
    /// `environment` is added to (and overrides) the test's own, from which `removing` is taken out first.
    /// Output goes to files, not pipes, so a chatty command cannot block on a full pipe while we wait for it.
    public static func run(
        _ arguments: [String],
        environment: [String: String] = [:],
        removing removed: [String] = ["PWFLAGS_SOCKET"],
        executable: String = "pwflags",
        timeout: Duration = .seconds(30)
    ) throws -> Outcome {
        let directory = try TemporaryDirectory(prefix: "pwcli")
        defer { directory.remove() }
        let stdoutPath = directory.file("stdout")
        let stderrPath = directory.file("stderr")
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonProcess.executable(executable))
        process.arguments = arguments
        process.environment = Self.environment(adding: environment, removing: removed)
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
        return Outcome(
            status: process.terminationStatus,
            stdout: (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        )
    }

    /// Starts `pwflags arguments…` with its stdout on a pipe the caller reads line by line (for `listen`).
    public static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> RunningCLI {
        try RunningCLI(
            arguments: arguments, environment: Self.environment(adding: environment, removing: ["PWFLAGS_SOCKET"]))
    }

    static func environment(adding added: [String: String], removing removed: [String]) -> [String: String] {
        var result = ProcessInfo.processInfo.environment
        for key in removed { result[key] = nil }
        for (key, value) in added { result[key] = value }
        return result
    }
}

/// Why a CLI run did not give an outcome.
public enum CLIError: Error, CustomStringConvertible {
    case timedOut([String])

    public var description: String {
        switch self {
        case .timedOut(let arguments): "pwflags \(arguments.joined(separator: " ")) did not finish in time"
        }
    }
}
