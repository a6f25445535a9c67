public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `pwflags` process that keeps running (such as `pwflags listen`), its stdout read line by line.
public final class RunningCLI {
    public let process: Process
    private let stdout: Pipe
    private let reader: LineReader

    init(arguments: [String], environment: [String: String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonProcess.executable("pwflags"))
        process.arguments = arguments
        process.environment = environment
        stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        reader = LineReader(fd: stdout.fileHandleForReading.fileDescriptor)
        try process.run()
    }

    deinit {
        stop()
    }

    /// The next line the process printed; nil when its stdout closed or `timeout` passed.
    public func readLine(timeout: Duration = .seconds(10)) -> String? {
        reader.readLine(timeout: timeout)
    }

    /// Ends the process and waits for it.
    ///
    /// SIGKILL, not SIGTERM: a child started by Foundation's `Process` may inherit a signal mask that blocks
    /// SIGTERM from the thread that spawned it, and then `terminate()` never ends it.
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
