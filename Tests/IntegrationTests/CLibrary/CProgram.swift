import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A C test program that reads commands on stdin and answers a line each on stdout (tests/probe.c), or any
/// program whose stdout is read line by line; `launcher` runs it under valgrind and the like.
final class CProgram {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let reader: LineReader
    /// Lines read while looking for another, in order.
    private var skipped: [String] = []

    init(_ executable: String, _ arguments: [String], launcher: [String] = [], environment: [String: String] = [:])
        throws
    {
        let command = launcher + [executable] + arguments
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        reader = LineReader(fd: output.fileHandleForReading.fileDescriptor)
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Sends one command line; a program that already exited (EPIPE) gets nothing.
    func send(_ command: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
    }

    /// The next line that starts with `prefix` (others are kept for `update`s), nil after `timeout`.
    func line(startingWith prefix: String, timeout: Duration = .seconds(20)) -> String? {
        if let index = skipped.firstIndex(where: { $0.hasPrefix(prefix) }) { return skipped.remove(at: index) }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let line = reader.readLine(timeout: ContinuousClock.now.duration(to: deadline)) else { return nil }
            if line.hasPrefix(prefix) { return line }
            skipped.append(line)
        }
        return nil
    }

    /// Sends `command` and returns the answer that starts with `prefix`.
    func ask(_ command: String, expecting prefix: String, timeout: Duration = .seconds(20)) -> String? {
        send(command)
        return line(startingWith: prefix, timeout: timeout)
    }

    /// The `update` lines seen so far and not yet taken.
    func takeUpdates() -> [String] {
        let updates = skipped.filter { $0.hasPrefix("update ") }
        skipped.removeAll { $0.hasPrefix("update ") }
        return updates
    }

    /// Closes stdin (the program frees its client and exits) and returns its exit status, nil after `timeout`.
    func finish(timeout: Duration = .seconds(120)) -> Int32? {
        send("quit")
        try? input.fileHandleForWriting.close()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline {
            _ = reader.readLine(timeout: .milliseconds(200))
        }
        guard !process.isRunning else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
