import FlagsCore
import Foundation
import TestSupport
import Testing

/// libpwflags across daemon restarts and with no daemon at start: reads go on, the mirror resumes with
/// `epoch` and `since`, and listeners hear only real changes.
@Suite(.serialized, .hangLimit) struct CLibraryResumeTests {
    static func probe() throws -> String {
        try CLibrary.build().compile(["tests/probe.c"], output: "probe")
    }

    @Test("Across a restart reads go on, no listener is called for the same flags, and the next change is heard")
    func restart() async throws {
        let first = try DaemonProcess.serving([Fixtures.checkout, Fixtures.banner])
        defer { first.directory.remove() }
        let program = try CProgram(try Self.probe(), [first.socketPath])
        #expect(program.ask("snapshot 15000", expecting: "snapshot") == "snapshot 1")
        #expect(program.ask("listen", expecting: "listening") == "listening 1")
        _ = first.stop()
        // The daemon is away: the mirror still answers.
        #expect(program.ask("enabled new_checkout 0", expecting: "enabled") == "enabled 1")
        #expect(
            await Eventually.wait(timeout: .seconds(15)) {
                program.ask("connected", expecting: "connected") == "connected 0"
            })
        let second = try DaemonProcess(config: LocalFlags.config(in: first.directory), directory: first.directory)
        defer { _ = second.stop() }
        #expect(
            await Eventually.wait(timeout: .seconds(15)) {
                program.ask("connected", expecting: "connected") == "connected 1"
            })
        #expect(program.ask("get banner", expecting: "flag") == "flag banner disabled rule=default source=file")
        try second.writeFlags([Fixtures.checkout])
        #expect(program.line(startingWith: "update") == "update changed= removed=banner")
        #expect(program.takeUpdates().isEmpty)
        #expect(program.finish() == 0)
    }

    @Test("IdleConnectionTimeout never closes the library's connection: it always holds its subscription")
    func idleTimeoutKeepsTheSubscribedConnection() throws {
        let daemon = try DaemonProcess.serving(
            [Fixtures.checkout, Fixtures.banner], extra: "[Daemon]\nIdleConnectionTimeout=1s\n")
        defer { daemon.cleanUp() }
        let program = try CProgram(try Self.probe(), [daemon.socketPath])
        #expect(program.ask("snapshot 15000", expecting: "snapshot") == "snapshot 1")
        #expect(program.ask("listen", expecting: "listening") == "listening 1")
        let sockets = Self.sockets(of: program.process.processIdentifier)
        #expect(!sockets.isEmpty)
        // Two sweeps pass: a connection with nothing to do, opened after the program's, is closed by the first
        // sweep that finds it idle, and one opened after that by a later sweep.
        for _ in 0..<2 {
            let idle = try daemon.connect()
            #expect(idle.isClosedByPeer(timeout: .seconds(10)), "the idle sweep never ran")
        }
        #expect(Self.sockets(of: program.process.processIdentifier) == sockets, "the library's socket was replaced")
        try daemon.writeFlags([Fixtures.checkout])
        #expect(program.line(startingWith: "update") == "update changed= removed=banner")
        #expect(program.finish() == 0)
    }

    /// The sockets a process holds open (`socket:[inode]`), read from /proc.
    static func sockets(of pid: Int32) -> Set<String> {
        let directory = "/proc/\(pid)/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return Set(
            entries.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\($0)") }
                .filter { $0.hasPrefix("socket:") })
    }

    @Test("With no daemon at start reads give their defaults, then the flags once it appears")
    func daemonAbsentAtStart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write(LocalFlags.fileName, LocalFlags.text([Fixtures.checkout]))
        let socketPath = directory.file("d.sock")
        let program = try CProgram(try Self.probe(), [socketPath])
        #expect(program.ask("listen", expecting: "listening") == "listening 1")
        #expect(program.ask("enabled new_checkout 0", expecting: "enabled") == "enabled 0")
        #expect(program.ask("enabled new_checkout 1", expecting: "enabled") == "enabled 1")
        #expect(program.ask("get new_checkout", expecting: "flag") == "flag new_checkout absent r=0")
        let daemon = try DaemonProcess(config: LocalFlags.config(in: directory), directory: directory)
        defer { _ = daemon.stop() }
        #expect(daemon.socketPath == socketPath)
        #expect(program.line(startingWith: "update") == "update changed=new_checkout removed=")
        #expect(program.ask("enabled new_checkout 0", expecting: "enabled") == "enabled 1")
        #expect(program.finish() == 0)
    }

    @Test("R15: while the daemon is away the flags serve until expiresAt, then go, and listeners are told")
    func flagsExpireWhileTheDaemonIsAway() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // The probe's wall clock moves a day on through the shim, instead of the test waiting for one.
        let shim = try PreloadShim.build("ClockShim/wall-clock-shift.c", in: directory)
        let shiftFile = directory.file("wall-clock-shift")
        _ = FileManager.default.createFile(atPath: shiftFile, contents: Data(count: 8))
        let rig = try PushwooshRig.start(
            daemon: ClientLibraryRefreshTests.startDaemon, replies: PushwooshRig.checkoutReplies)
        defer { rig.stop() }
        let program = try CProgram(
            try Self.probe(), [rig.daemon.socketPath],
            environment: ["LD_PRELOAD": shim, "PWFLAGS_WALL_CLOCK_SHIFT_FILE": shiftFile])
        #expect(program.ask("refresh", expecting: "refresh", timeout: .seconds(60)) == "refresh error=0 status=200")
        #expect(program.ask("enabled new_checkout 0", expecting: "enabled") == "enabled 1")
        #expect(program.ask("listen", expecting: "listening") == "listening 1")
        _ = rig.daemon.stop()
        #expect(
            await Eventually.wait(timeout: .seconds(15)) {
                program.ask("connected", expecting: "connected") == "connected 0"
            })
        // An hour on the flags still serve (CacheMaxAge is a day); a day and a minute on they are gone.
        try WallClockChangeTests.shift(shiftFile, by: 3600)
        #expect(program.ask("process", expecting: "processed") == "processed 1")
        #expect(program.ask("enabled new_checkout 0", expecting: "enabled") == "enabled 1")
        try WallClockChangeTests.shift(shiftFile, by: 86_400 + 60)
        #expect(program.ask("process", expecting: "processed") == "processed 1")
        #expect(program.line(startingWith: "update") == "update changed= removed=new_checkout")
        #expect(program.ask("enabled new_checkout 0", expecting: "enabled") == "enabled 0")
        #expect(program.finish() == 0)
    }
}
