import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The socket file from start to stop: its mode, stale files, a live one never stolen, removal at shutdown.
@Suite(.hangLimit) struct SocketLifecycleTests {
    @Test(arguments: [("0600", UInt32(0o600)), ("0666", UInt32(0o666))])
    func socketModeIsApplied(text: String, mode: UInt32) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all, extra: "[Daemon]\nSocketMode=\(text)\n")
        defer { daemon.cleanUp() }
        #expect(SocketFile.isSocket(daemon.socketPath))
        #expect(SocketFile.permissions(of: daemon.socketPath) == mode)
    }

    @Test func theDefaultSocketModeIs0660() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        #expect(SocketFile.permissions(of: daemon.socketPath) == 0o660)
    }

    @Test func aStaleSocketFileIsReplaced() throws {
        let directory = try TemporaryDirectory()
        try directory.write(LocalFlags.fileName, LocalFlags.text(Fixtures.all))
        try SocketFile.createStale(at: directory.file("d.sock"))
        #expect(SocketFile.isSocket(directory.file("d.sock")))
        let daemon = try DaemonProcess(config: LocalFlags.config(in: directory), directory: directory)
        defer { daemon.cleanUp() }
        #expect(try daemon.connect().call("get", ["key": "dark_mode"])?["result"]?["flag"]?["key"] == "dark_mode")
        #expect(daemon.log.contains("stale"))
    }

    @Test func aSecondDaemonOnALiveSocketExitsWithoutStealingIt() throws {
        let first = try DaemonProcess.serving(Fixtures.all)
        defer { first.cleanUp() }
        let other = try TemporaryDirectory()
        let config =
            LocalFlags.config(in: first.directory)
            + "[Daemon]\nSocketPath=\(first.socketPath)\nStateDirectory=\(other.file("state"))\n"
        let second = try DaemonProcess(config: config, directory: other, addDefaults: false, waitForReady: false)
        defer { second.cleanUp(expecting: .status(1)) }
        #expect(second.waitForExit() == 1)
        #expect(second.log.contains("another pwflagsd is already serving \(first.socketPath)"), "log:\n\(second.log)")
        // It has exited, so every message it sent is already queued on the notify socket.
        #expect(second.notify.waitFor("READY=1", timeout: .milliseconds(100)) == nil)
        #expect(SocketFile.isSocket(first.socketPath))
        #expect(first.isRunning)
        #expect(try first.connect().call("get", ["key": "new_checkout"])?["result"]?["flag"]?["key"] == "new_checkout")
    }

    @Test func aPathThatIsNotASocketIsNeverDeleted() throws {
        let directory = try TemporaryDirectory()
        try directory.write("d.sock", "precious")
        let daemon = try DaemonProcess(
            config: LocalFlags.config(in: directory), directory: directory, waitForReady: false)
        defer { daemon.cleanUp(expecting: .status(1)) }
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("is not a socket"))
        #expect((try? String(contentsOfFile: directory.file("d.sock"), encoding: .utf8)) == "precious")
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aShutdownSignalStopsGracefullyAndRemovesTheSocket(signal number: Int32) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        _ = try #require(try client.call("listen")?["result"])
        daemon.signal(number)
        #expect(daemon.waitForExit() == 0, "log:\n\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
        #expect(client.isClosedByPeer())
        #expect(daemon.notify.waitFor("STOPPING=1", timeout: .seconds(1)) != nil)
    }

    @Test(arguments: 0..<12)
    func sigtermStopsADaemonThatJustBecameReady(round: Int) throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        daemon.signal(SIGTERM)
        // Repeated because the signal used to be lost now and then (a Dispatch signal source on Linux).
        #expect(daemon.waitForExit(timeout: .seconds(5)) == 0, "pwflagsd did not stop on SIGTERM; log:\n\(daemon.log)")
    }

    @Test func checkConfigAcceptsTheDemoConfiguration() throws {
        let demo = Repository.path("config/demo.conf")
        let outcome = try CLI.run(["--check-config", "--config", demo], executable: "pwflagsd")
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stdout.contains("LocalFlagsFile"))
    }

    @Test func checkConfigReportsAnUnknownKeyWithFileAndLine() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("bad.conf")
        try "[Daemon]\n# a comment\nSocketPath=/tmp/x.sock\nNoSuchKey=1\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        let outcome = try CLI.run(["--check-config", "--config", path], executable: "pwflagsd")
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stderr.contains("\(path):4:"), "\(outcome)")
        #expect(outcome.stderr.contains("NoSuchKey"))
    }
}
