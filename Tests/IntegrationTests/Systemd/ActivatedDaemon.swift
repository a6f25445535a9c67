import FlagsCore
import Foundation
import TestSupport
import Testing

/// A daemon started by `systemd-socket-activate` on local flags, passed the sockets `sockets` names (a file in its
/// directory, and the descriptor's name), in that order, and with no `ListenAddress` or Varlink `SocketPath` of
/// its own: the passed descriptors alone turn the listeners on. Its own `SocketPath` is `own.sock`, which it must
/// not create.
struct ActivatedDaemon {
    let directory: TemporaryDirectory
    let notify: NotifySocket
    let process: Process
    let logPath: String

    init(flags: [Flag], passing sockets: KeyValuePairs<String, String>) throws {
        let directory = try TemporaryDirectory()
        self.directory = directory
        try directory.write("flags.json", LocalFlags.text(flags))
        try directory.write(
            "pwflagsd.conf",
            """
            [FeatureFlags]
            LocalFlagsFile=flags.json
            [Daemon]
            SocketPath=\(directory.file("own.sock"))
            StateDirectory=\(directory.file("state"))
            """)
        notify = try NotifySocket(path: directory.file("notify.sock"))
        logPath = directory.file("daemon.log")
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process = try SocketActivationTests.activate(
            sockets.map { "--listen=\(directory.file($0.key))" }
                + ["--fdname=" + sockets.map(\.value).joined(separator: ":")], notify: notify,
            config: directory.file("pwflagsd.conf"), log: logPath)
    }

    /// The path of `name` in the daemon's directory.
    func path(_ name: String) -> String { directory.file(name) }

    /// The daemon's log so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Waits until every one of `paths` listens: a socket file can exist before its listen(2).
    func waitUntilListening(on paths: [String]) -> Bool {
        SocketActivationTests.waitUntilListening(on: paths, log: logPath)
    }

    /// Stops the daemon and removes its directory.
    func stop() {
        _ = SocketActivationTests.stop(process, log: logPath)
        directory.remove()
    }
}
