import Foundation
import TestSupport
import Testing

/// A part of the daemon that fails while it serves, or before it can: the daemon ends with exit status 1 and says
/// which part and why, instead of living on without it. The failures come from an LD_PRELOAD shim
/// (`Tests/FaultShim/service-faults.c`, compiled here) that makes one system call fail; the daemon has no switch for
/// them.
@Suite(
    .disabled(if: Sanitizer.isActive, "an LD_PRELOAD shim under a sanitizer's interceptors; run without one"),
    .hangLimit)
struct ServiceFailureTests {
    static let shimSource = "FaultShim/service-faults.c"

    @Test("The socket server's epoll wait fails after READY=1: the daemon stops with status 1 and says why")
    func theSocketServerFailingEndsTheDaemon() throws {
        let directory = try TemporaryDirectory()
        let shim = try PreloadShim.build(Self.shimSource, in: directory)
        try directory.write(LocalFlags.fileName, LocalFlags.text(Fixtures.all))
        let daemon = try DaemonProcess(
            config: LocalFlags.config(in: directory), directory: directory,
            environment: ["LD_PRELOAD": shim, "PWFLAGS_FAULT_EPOLL_SOCKET": directory.file("d.sock")])
        defer { daemon.cleanUp(expecting: .status(1)) }
        // The loop waits for the first time after READY=1, and that wait fails.
        #expect(daemon.waitForExit() == 1, "the daemon lives on without its socket server; log:\n\(daemon.log)")
        let log = daemon.log
        #expect(log.contains("epoll_wait failed"), "log:\n\(log)")
        #expect(
            log.contains("the service SocketServer ended before shutdown was asked for; the daemon stops"),
            "log:\n\(log)")
        #expect(!log.contains("cannot start"), "log:\n\(log)")
        let stopping = try #require(daemon.notify.waitFor("STOPPING=1", timeout: .seconds(1)))
        #expect(
            stopping.contains("STATUS=Stopping: the service SocketServer ended before shutdown was asked for"),
            "\(stopping)")
        // Its socket file goes with it, as at a clean stop.
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
    }

    @Test("No signal pipe can be made: the daemon does not start, and never says READY=1")
    func noSignalPipeMeansNoStart() throws {
        let directory = try TemporaryDirectory()
        let shim = try PreloadShim.build(Self.shimSource, in: directory)
        try directory.write(LocalFlags.fileName, LocalFlags.text(Fixtures.all))
        let daemon = try DaemonProcess(
            config: LocalFlags.config(in: directory), directory: directory,
            environment: ["LD_PRELOAD": shim, "PWFLAGS_FAULT_PIPE": "1"], waitForReady: false)
        defer { daemon.cleanUp(expecting: .status(1)) }
        #expect(daemon.waitForExit() == 1, "log:\n\(daemon.log)")
        let log = daemon.log
        #expect(
            log.contains(
                "cannot start: cannot catch SIGTERM, SIGINT and SIGHUP, so the daemon could not stop gracefully: "
                    + "pipe: Too many open files"),
            "log:\n\(log)")
        // It has exited, so every message it sent is already queued on the notify socket.
        #expect(daemon.notify.waitFor("READY=1", timeout: .milliseconds(100)) == nil)
    }
}
