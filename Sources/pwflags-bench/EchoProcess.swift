import Foundation
import PWFlagsTestKit
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The blocking echo floor run as a separate process (the benchmark started with `--serve-echo PATH`).
///
/// pwflagsd is a process of its own, so every round trip to it switches address spaces; an echo thread inside
/// the benchmark's own process does not, and on this machine that alone is worth about 2.5 µs a round trip.
/// The targets compare against this floor; the in-process one is printed beside it.
final class EchoProcess {
    let path: String
    private let process: Process

    init(benchPath: String, path: String) throws {
        self.path = path
        process = Process()
        // Killed with the benchmark, by SIGKILL as in `stop()`: it may inherit SIGTERM blocked, and has nothing to clean.
        let launcher =
            DaemonProcess.parentDeathLauncher.isEmpty ? [] : ["/usr/bin/setpriv", "--pdeathsig", "KILL", "--"]
        let command = launcher + [benchPath, "--serve-echo", path]
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        // Not the benchmark's own output: a reader of that (the smoke test) must see it end with the benchmark.
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        while UnixSocket.probe(path) != .inUse {
            guard MonotonicClock.nanoseconds() < deadline else {
                throw SystemError("echo process at \(path)", errno: ETIMEDOUT)
            }
            usleep(2_000)
        }
    }

    func stop() {
        // SIGKILL: Foundation may start children with SIGTERM blocked, and the echo has nothing to clean up.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        unlink(path)
    }
}
