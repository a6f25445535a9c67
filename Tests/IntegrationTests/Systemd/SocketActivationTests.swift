import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// D4: socket activation as systemd does it, through `systemd-socket-activate` (Debian's systemd package), which
/// listens on a socket, starts pwflagsd on the first connection and passes it the socket with `LISTEN_FDS`.
@Suite(.hangLimit) struct SocketActivationTests {
    static let flags = """
        {"flags":[{"key":"new_checkout","enabled":true,"rule_id":"r_1a2b3c4d","properties":{"color":"green"}}]}
        """

    /// `systemd-socket-activate` from the systemd package; a missing one fails the test rather than skipping it.
    static func socketActivate() throws -> String {
        let candidates = ["/usr/bin/systemd-socket-activate", "/bin/systemd-socket-activate"]
        return try #require(
            candidates.first { FileManager.default.isExecutableFile(atPath: $0) },
            "systemd-socket-activate is missing (Debian package systemd)")
    }

    /// Starts `systemd-socket-activate` with `activation` (its `--listen` and `--fdname` options) in front of
    /// pwflagsd on `config`, its stderr in `log`. systemd-socket-activate passes on only what -E names, so
    /// NOTIFY_SOCKET goes through -E, and the sanitizers' settings a daemon gets (the daemon's ASan options, not
    /// the runner's, and the suppression files) when the suite runs under one. Stop it with `stop(_:log:)`.
    static func activate(_ activation: [String], notify: NotifySocket, config: String, log: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try socketActivate())
        let sanitizerSettings = DaemonProcess.sanitizerEnvironment.sorted { $0.key < $1.key }.flatMap {
            ["-E", "\($0.key)=\($0.value)"]
        }
        process.arguments =
            activation + ["-E", "NOTIFY_SOCKET=\(notify.path)"] + sanitizerSettings + [
                DaemonProcess.executable("pwflagsd"), "--config", config,
            ]
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test("The first connection starts pwflagsd on the passed socket; READY=1; SIGTERM leaves the socket file")
    func servesThePassedSocketAndLeavesIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let activatedPath = directory.file("activated.sock")
        let ownPath = directory.file("own.sock")
        try directory.write("flags.json", Self.flags)
        // SocketPath names a different file: the daemon must not create it when a socket is passed.
        try directory.write(
            "pwflagsd.conf",
            """
            [FeatureFlags]
            LocalFlagsFile=flags.json
            [Daemon]
            SocketPath=\(ownPath)
            StateDirectory=\(directory.file("state"))
            """)
        let notify = try NotifySocket(path: directory.file("notify.sock"))
        let logPath = directory.file("daemon.log")
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)

        let process = try Self.activate(
            ["--listen=\(activatedPath)"], notify: notify, config: directory.file("pwflagsd.conf"), log: logPath)
        let log = { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
        var stopped = false
        defer { if !stopped { Self.stop(process, log: logPath) } }

        try #require(
            Self.waitUntilListening(on: [activatedPath], log: logPath), "no listening socket; log:\n\(log())")
        #expect(notify.received.isEmpty, "pwflagsd must not run before the first connection")

        // Connecting is what starts the daemon; the request waits in the socket until it serves.
        let client = try RawClient(socketPath: activatedPath)
        let answer = try client.request(#"{"id":1,"method":"get","params":{"key":"new_checkout"}}"#)
        let flag = try #require(answer?["result"]?["flag"], "no flag; log:\n\(log())")
        #expect(flag["key"] == "new_checkout")
        #expect(flag["enabled"] == true)
        #expect(flag["ruleId"] == "r_1a2b3c4d")

        let ready = try #require(notify.waitFor("READY=1"), "no READY=1; log:\n\(log())")
        #expect(ready.contains("STATUS=Local file: 1 flags"))
        #expect(log().contains("(socket activation)"))
        #expect(!FileManager.default.fileExists(atPath: ownPath), "the daemon created its own socket too")

        stopped = true
        // SIGTERM: exit status 0 and no sanitizer report, or the test fails with the log.
        #expect(Self.stop(process, log: logPath))
        #expect(notify.waitFor("STOPPING=1", timeout: .seconds(1)) != nil)
        // The socket belongs to whoever passed it (systemd-socket-activate here, pwflagsd.socket under systemd).
        #expect(Self.isSocket(activatedPath), "the daemon unlinked the socket it was given")
    }

    /// Stops an activated daemon through the test kit's one check (`DaemonExitCheck`): SIGTERM, exit status 0,
    /// no sanitizer report in `log`; anything else fails the test. False when the check failed.
    @discardableResult
    static func stop(_ process: Process, log: String) -> Bool {
        DaemonExitCheck.verify(DaemonExitCheck.terminate(process), expected: .clean, logPath: log)
    }

    /// Waits until `systemd-socket-activate` says in `log` that it listens on each of `paths` (it binds, listens,
    /// then logs `Listening on PATH as FD.`, one socket after another): a socket file alone may not listen yet,
    /// and a connection then is refused.
    static func waitUntilListening(on paths: [String], log: String) -> Bool {
        waitUntil {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return paths.allSatisfy { text.contains("Listening on \($0) as ") }
        }
    }

    static func isSocket(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
    }

    /// Polls `condition` every 10 ms; false after `timeout`.
    static func waitUntil(timeout: Duration = .seconds(20), _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
}
