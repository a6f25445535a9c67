import FlagsCore
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's memory and descriptors at one moment, with the number of connections the soak held then.
struct DaemonReading {
    /// `VmRSS` and `RssAnon`, in KiB.
    var rss: Double
    var anon: Double
    /// Entries of `/proc/PID/fd`.
    var descriptors: Int
    /// Connections the soak held to the daemon.
    var connections: Int

    /// Descriptors that are not the soak's connections: what must not grow.
    var ownDescriptors: Int { descriptors - connections }

    /// Reads the daemon once it agrees that `connections` are open: its `status.connections` must say so
    /// (a connection the soak just closed may not be closed at the daemon yet). Gives up after 5 s.
    static func take(of daemon: DaemonProcess, connections: Int, session: SocketSession) throws -> DaemonReading {
        let deadline = Measure.now() + 5_000_000_000
        while true {
            let reported = try session.result("status")?["connections"]?.integerValue
            if reported == connections || Measure.now() > deadline { break }
            usleep(5_000)
        }
        let pid = daemon.process.processIdentifier
        let (rss, anon) = Measure.memory(of: pid)
        return DaemonReading(
            rss: rss, anon: anon, descriptors: Measure.openDescriptors(of: pid) ?? -1, connections: connections)
    }
}
