import FlagsCore
import Foundation
import TestSupport
import Testing

/// The Varlink listener passed by socket activation as the descriptor named `varlink` (what
/// `pwflagsd-varlink.socket` does with `FileDescriptorName=varlink`), without `[Varlink] SocketPath=`: the
/// first Varlink call starts the daemon, and the line protocol's socket beside it still serves.
@Suite(.hangLimit) struct VarlinkSocketActivationTests {
    @Test func theDescriptorNamedVarlinkServesVarlinkAndTheOtherTheLineProtocol() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let mainPath = directory.file("main.sock")
        let varlinkPath = directory.file("io.github.pwflagsd.Flags")
        try directory.write("flags.json", LocalFlags.text(Fixtures.all))
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
        let process = try SocketActivationTests.activate(
            ["--listen=\(varlinkPath)", "--listen=\(mainPath)", "--fdname=varlink:pwflagsd.socket"], notify: notify,
            config: directory.file("pwflagsd.conf"), log: logPath)
        let log = { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
        defer { SocketActivationTests.stop(process, log: logPath) }
        try #require(
            SocketActivationTests.waitUntilListening(on: [varlinkPath, mainPath], log: logPath),
            "no listening sockets; log:\n\(log())")

        let info = try VarlinkClient(socketPath: varlinkPath).call("org.varlink.service.GetInfo")
        #expect(info?["parameters"]?["interfaces"] == ["org.varlink.service", "io.github.pwflagsd.Flags"], "\(log())")
        #expect(notify.waitFor("READY=1") != nil)
        let line = try RawClient(socketPath: mainPath).request(#"{"id":1,"method":"get","params":{"key":"dark_mode"}}"#)
        #expect(line?["result"]?["flag"]?["key"] == "dark_mode", "log:\n\(log())")
        #expect(!log().contains("ignored a passed file descriptor"))
        #expect(!FileManager.default.fileExists(atPath: directory.file("own.sock")))
    }
}
