import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The OFREP listener passed by socket activation as the descriptor named `ofrep` (what
/// `pwflagsd-ofrep.socket` does with `FileDescriptorName=ofrep`), next to the line protocol's socket, in
/// either order.
@Suite(.hangLimit) struct OFREPSocketActivationTests {
    @Test(arguments: [false, true])
    func theDescriptorNamedOfrepServesOFREPAndTheOtherTheLineProtocol(ofrepFirst: Bool) throws {
        let sockets: KeyValuePairs<String, String> =
            ofrepFirst
            ? ["ofrep.sock": "ofrep", "main.sock": "pwflagsd.socket"]
            : ["main.sock": "pwflagsd.socket", "ofrep.sock": "ofrep"]
        let daemon = try ActivatedDaemon(flags: OFREPRig.flags, passing: sockets)
        defer { daemon.stop() }
        let (mainPath, ofrepPath) = (daemon.path("main.sock"), daemon.path("ofrep.sock"))
        try #require(daemon.waitUntilListening(on: [ofrepPath, mainPath]), "no listening sockets; log:\n\(daemon.log)")

        // An OFREP request is what starts the daemon here.
        let answer = try HTTPClient(unixSocket: ofrepPath).post(OFREPRig.single("new_checkout"))
        #expect(answer?.status == 200, "log:\n\(daemon.log)")
        #expect(answer?.json?["value"] == true)
        #expect(daemon.notify.waitFor("READY=1") != nil)
        let line = try RawClient(socketPath: mainPath).request(#"{"id":1,"method":"get","params":{"key":"banner"}}"#)
        #expect(line?["result"]?["flag"]?["key"] == "banner", "log:\n\(daemon.log)")
        #expect(!daemon.log.contains("ignored a passed file descriptor"))
    }
}
