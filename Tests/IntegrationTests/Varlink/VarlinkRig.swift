import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport

/// A daemon on the local flags file that serves Varlink too, on `varlink.sock` in its directory.
struct VarlinkRig {
    let daemon: DaemonProcess

    /// `extra` goes to the configuration after the `[Varlink]` section (start it with its own section).
    init(_ flags: [Flag] = Fixtures.all, extra: String = "") throws {
        let directory = try TemporaryDirectory()
        try directory.write(LocalFlags.fileName, LocalFlags.text(flags))
        let config = LocalFlags.config(
            in: directory, extra: "[Varlink]\nSocketPath=\(directory.file("varlink.sock"))\n")
        do {
            daemon = try DaemonProcess(config: config + extra, directory: directory)
        } catch {
            directory.remove()
            throw error
        }
    }

    var socketPath: String { daemon.directory.file("varlink.sock") }

    func connect() throws -> VarlinkClient { try VarlinkClient(socketPath: socketPath) }

    func cleanUp() { daemon.cleanUp() }
}
