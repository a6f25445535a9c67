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
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let mainPath = directory.file("main.sock")
        let ofrepPath = directory.file("ofrep.sock")
        try directory.write("flags.json", LocalFlags.text(OFREPRig.flags))
        // No ListenAddress: the activated descriptor alone turns OFREP on.
        try directory.write(
            "pwflagsd.conf",
            """
            [FeatureFlags]
            LocalFlagsFile=flags.json
            [Daemon]
            SocketPath=\(directory.file("own.sock"))
            StateDirectory=\(directory.file("state"))
            """)
        let notify = try NotifySocket(path: directory.file("notify.sock"))
        let logPath = directory.file("daemon.log")
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let listens =
            ofrepFirst
            ? ["--listen=\(ofrepPath)", "--listen=\(mainPath)"] : ["--listen=\(mainPath)", "--listen=\(ofrepPath)"]
        let names = ofrepFirst ? "--fdname=ofrep:pwflagsd.socket" : "--fdname=pwflagsd.socket:ofrep"
        let process = try SocketActivationTests.activate(
            listens + [names], notify: notify, config: directory.file("pwflagsd.conf"), log: logPath)
        let log = { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
        defer { SocketActivationTests.stop(process, log: logPath) }
        // Both sockets listen before the first connection: a socket file can exist before its listen(2).
        try #require(
            SocketActivationTests.waitUntilListening(on: [ofrepPath, mainPath], log: logPath),
            "no listening sockets; log:\n\(log())")

        // An OFREP request is what starts the daemon here.
        let answer = try HTTPClient(unixSocket: ofrepPath).post(OFREPRig.single("new_checkout"))
        #expect(answer?.status == 200, "log:\n\(log())")
        #expect(answer?.json?["value"] == true)
        #expect(notify.waitFor("READY=1") != nil)
        let line = try RawClient(socketPath: mainPath).request(#"{"id":1,"method":"get","params":{"key":"banner"}}"#)
        #expect(line?["result"]?["flag"]?["key"] == "banner", "log:\n\(log())")
        #expect(!log().contains("ignored a passed file descriptor"))
    }
}
