import TestSupport

extension DaemonProcess {
    /// Stops this daemon and starts another on the same local flags file, state directory and socket: a restart.
    func restarted() throws -> DaemonProcess {
        _ = stop()
        return try DaemonProcess(config: LocalFlags.config(in: directory), directory: directory)
    }
}
