public import FlagsCore
import Foundation

extension DaemonProcess {
    /// Writes `flags` to a local flags file in a fresh temporary directory and starts a daemon serving it.
    ///
    /// `extra` is appended to the configuration (for example `[Daemon]\nMaxConnections=4`); `flags` nil starts
    /// the daemon without the file; `launcher` is as in `init`.
    public static func serving(
        _ flags: [Flag]?,
        extra: String = "",
        environment: [String: String] = [:],
        launcher: [String] = []
    ) throws -> DaemonProcess {
        let directory = try TemporaryDirectory()
        if let flags {
            try directory.write(LocalFlags.fileName, LocalFlags.text(flags))
        }
        do {
            return try DaemonProcess(
                config: LocalFlags.config(in: directory, extra: extra),
                directory: directory,
                environment: environment,
                launcher: launcher
            )
        } catch {
            directory.remove()
            throw error
        }
    }

    /// The path of the local flags file the daemon serves.
    public var flagsPath: String { directory.file(LocalFlags.fileName) }

    /// Replaces the local flags file in one step (write, then rename), as an editor would.
    public func writeFlags(_ flags: [Flag]) throws {
        try directory.write(LocalFlags.fileName, LocalFlags.text(flags))
    }

    /// Replaces the local flags file with `text`, valid or not.
    public func writeFlagsFile(_ text: String) throws {
        try directory.write(LocalFlags.fileName, text)
    }

    /// A new raw connection to the daemon's socket.
    public func connect() throws -> RawClient {
        try RawClient(socketPath: socketPath)
    }
}
