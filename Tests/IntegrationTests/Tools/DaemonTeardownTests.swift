import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// pwflags-bench and pwflags-soak take the daemons they start down with them, however they are stopped: a run
/// killed by a timeout leaves nothing running.
@Suite(.serialized, .hangLimit) struct DaemonTeardownTests {
    /// Starts `executable` with `arguments` and waits until it has a running `pwflagsd` child.
    static func startWithDaemon(_ executable: String, _ arguments: [String]) async throws -> (Process, Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonProcess.executable(executable))
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var daemon: Int32?
        _ = await Eventually.wait(timeout: .seconds(30)) {
            daemon = ProcessTree.children(of: process.processIdentifier, named: "pwflagsd").first
            return daemon != nil
        }
        guard let daemon else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "\(executable) started no daemon"])
        }
        return (process, daemon)
    }

    @Test("a soak killed with SIGKILL takes its daemon down within two seconds")
    func soakKilled() async throws {
        let (soak, daemon) = try await Self.startWithDaemon("pwflags-soak", ["--seconds", "120"])
        kill(soak.processIdentifier, SIGKILL)
        soak.waitUntilExit()
        #expect(await Eventually.wait(timeout: .seconds(2)) { !ProcessTree.isRunning(daemon) })
    }

    @Test("a bench killed with SIGKILL takes its daemon and its echo process down within two seconds")
    func benchKilled() async throws {
        let (bench, daemon) = try await Self.startWithDaemon("pwflags-bench", ["--quick"])
        let echoes = ProcessTree.children(of: bench.processIdentifier, named: "pwflags-bench")
        kill(bench.processIdentifier, SIGKILL)
        bench.waitUntilExit()
        #expect(await Eventually.wait(timeout: .seconds(2)) { !ProcessTree.isRunning(daemon) })
        #expect(await Eventually.wait(timeout: .seconds(2)) { echoes.allSatisfy { !ProcessTree.isRunning($0) } })
    }

    @Test(
        "a soak stopped with SIGTERM or SIGINT stops its daemon and exits with 128 + the signal",
        arguments: [SIGTERM, SIGINT])
    func soakTerminated(_ number: Int32) async throws {
        let (soak, daemon) = try await Self.startWithDaemon("pwflags-soak", ["--seconds", "120"])
        kill(soak.processIdentifier, number)
        guard DaemonExitCheck.waitForExit(soak, timeout: .seconds(30)) else {
            kill(soak.processIdentifier, SIGKILL)
            soak.waitUntilExit()
            Issue.record("the soak did not exit on signal \(number)")
            return
        }
        #expect(soak.terminationStatus == 128 + number)
        #expect(!ProcessTree.isRunning(daemon))
    }
}
