import FlagsCore
import Foundation
import TestSupport
import Testing

/// The Varlink listener passed by socket activation as the descriptor named `varlink` (what
/// `pwflagsd-varlink.socket` does with `FileDescriptorName=varlink`), without `[Varlink] SocketPath=`: the
/// first Varlink call starts the daemon, and the line protocol's socket beside it still serves.
@Suite(.hangLimit) struct VarlinkSocketActivationTests {
    @Test func theDescriptorNamedVarlinkServesVarlinkAndTheOtherTheLineProtocol() throws {
        let daemon = try ActivatedDaemon(
            flags: Fixtures.all, passing: ["io.github.pwflagsd.Flags": "varlink", "main.sock": "pwflagsd.socket"])
        defer { daemon.stop() }
        let (mainPath, varlinkPath) = (daemon.path("main.sock"), daemon.path("io.github.pwflagsd.Flags"))
        try #require(
            daemon.waitUntilListening(on: [varlinkPath, mainPath]), "no listening sockets; log:\n\(daemon.log)")

        let info = try VarlinkClient(socketPath: varlinkPath).call("org.varlink.service.GetInfo")
        #expect(
            info?["parameters"]?["interfaces"] == ["org.varlink.service", "io.github.pwflagsd.Flags"], "\(daemon.log)")
        #expect(daemon.notify.waitFor("READY=1") != nil)
        let line = try RawClient(socketPath: mainPath).request(#"{"id":1,"method":"get","params":{"key":"dark_mode"}}"#)
        #expect(line?["result"]?["flag"]?["key"] == "dark_mode", "log:\n\(daemon.log)")
        #expect(!daemon.log.contains("ignored a passed file descriptor"))
        #expect(!FileManager.default.fileExists(atPath: daemon.path("own.sock")))
    }
}
