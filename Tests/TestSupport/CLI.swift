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
        try Command.finish(
            DaemonProcess.executable(executable), arguments,
            environment: Self.environment(adding: environment, removing: removed), timeout: timeout)
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
