import FlagsCore
import Foundation
import TestSupport
import Testing

/// libpwflags across daemon restarts and with no daemon at start: reads go on, the mirror resumes with
/// `epoch` and `since`, and listeners hear only real changes.
@Suite(.serialized) struct CLibraryResumeTests {
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
}
