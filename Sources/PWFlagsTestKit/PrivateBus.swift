import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `dbus-daemon` of its own for a bench or a test, with a policy that lets every client own and call anything: for
/// measuring the daemon on a bus, not the bus's policy (BusRig in the tests runs the shipped one).
public final class PrivateBus {
    let process: Process
    /// The address clients and the daemon use.
    public let address: String

    /// Starts the bus on a socket in `directory`; nil when Debian's `dbus-daemon` is not installed or does not start.
    public init?(directory: TemporaryDirectory) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") else { return nil }
        let socket = directory.file("bus")
        let config = directory.file("bus.conf")
        try """
        <busconfig><type>session</type><listen>unix:path=\(socket)</listen><auth>EXTERNAL</auth>
        <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
        <allow own="*"/></policy></busconfig>
        """.write(toFile: config, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--config-file=\(config)", "--nofork", "--print-address"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard LineReader(fd: output.fileHandleForReading.fileDescriptor).readLine(timeout: .seconds(10)) != nil else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        address = "unix:path=\(socket)"
    }

    /// SIGKILL, not `terminate()`: a child started by Foundation's `Process` may inherit a signal mask that
    /// blocks SIGTERM (RunningCLI says more), and the wait would then never end.
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
