import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// libpwflags against a peer that is not a well-behaved daemon: the program goes on, the library comes back
/// with backoff, and its memory stays within the bound docs/c-library.md states.
@Suite(.serialized, .hangLimit) struct CLibraryHostilePeerTests {
    /// The stated bound (a 16 MiB line, its parse at most 8 times that) plus the program itself.
    static let residentLimit = 200 << 20

    @Test(
        "A hostile peer never crashes the program and the library's memory stays bounded",
        arguments: [HostilePeer.Behaviour.garbage, .endlessLine, .hugeLine])
    func hostilePeer(behaviour: HostilePeer.Behaviour) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let peer = try HostilePeer(at: directory.file("hostile.sock"), behaviour: behaviour)
        defer { peer.stop() }
        let probe = try CLibrary.build().compile(["tests/probe.c"], output: "probe")
        let program = try CProgram(probe, [peer.path])
        #expect(program.line(startingWith: "ready") == "ready")
        // Cut off, it comes back (with backoff): a third connection shows it survived two rounds.
        #expect(await Eventually.wait(timeout: .seconds(60)) { peer.connections >= 3 })
        #expect(program.ask("enabled any 1", expecting: "enabled") == "enabled 1")
        #expect(program.ask("snapshot 0", expecting: "snapshot") == "snapshot 0")
        let memory = try #require(ProcessMemory.of(pid: program.process.processIdentifier))
        #expect(memory.peakResident < Self.residentLimit, "peak RSS \(memory.peakResident)")
        #expect(program.finish() == 0)
    }

    @Test("A peer that stops reading gets no more than the pending bound: later calls fail with -ENOBUFS")
    func peerThatStopsReading() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let peer = try HostilePeer(at: directory.file("hostile.sock"), behaviour: .notReading)
        defer { peer.stop() }
        let probe = try CLibrary.build().compile(["tests/probe.c"], output: "probe")
        let program = try CProgram(probe, [peer.path])
        #expect(program.line(startingWith: "ready") == "ready")
        // 1,024 calls may wait for an answer; the 1,025th is refused at once.
        for _ in 0..<1100 { program.send("impression some_flag") }
        #expect(program.line(startingWith: "impression error=-105") != nil)
        #expect(program.ask("enabled any 0", expecting: "enabled") == "enabled 0")
        #expect(program.finish() == 0)
    }
}
