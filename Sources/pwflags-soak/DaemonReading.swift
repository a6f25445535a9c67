import FlagsCore
import Foundation
import PWFlagsTestKit
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's memory and descriptors at one moment, with the number of connections the soak held then.
struct DaemonReading {
    /// `VmRSS` and `RssAnon`, in KiB.
    var rss: Double
    var anon: Double
    /// Entries of `/proc/PID/fd`: the fewest of a few looks.
    var descriptors: Int
    /// Connections the soak held to the daemon.
    var connections: Int
    /// The connections and subscriptions the daemon's `status` reported; -1 when it did not.
    var reportedConnections: Int
    var subscriptions: Int
    /// What each descriptor is (`socket:[…]`, `anon_inode:[eventfd]`, a path), to name a leak.
    var targets: [String]

    /// Descriptors that are not the soak's connections: what must not grow.
    var ownDescriptors: Int { descriptors - connections }

    /// Reads the daemon once it agrees that `connections` are open: its `status.connections` must say so
    /// (a connection the soak just closed may not be closed at the daemon yet). Gives up after 5 s.
    static func take(of daemon: DaemonProcess, connections: Int, session: SocketSession) throws -> DaemonReading {
        let deadline = MonotonicClock.nanoseconds() + 5_000_000_000
        var subscriptions = -1
        var reported = -1
        while true {
            let status = try session.result("status")
            subscriptions = status?["subscriptions"]?.integerValue ?? -1
            reported = status?["connections"]?.integerValue ?? -1
            if reported == connections || MonotonicClock.nanoseconds() > deadline { break }
            usleep(5_000)
        }
        let pid = daemon.process.processIdentifier
        let (rss, anon) = Measure.memory(of: pid)
        // The fewest of ten looks 20 ms apart: a file re-read or an sd_notify holds a descriptor for a moment.
        var targets = descriptorTargets(of: pid)
        for _ in 0..<9 {
            usleep(20_000)
            let again = descriptorTargets(of: pid)
            if again.count < targets.count { targets = again }
        }
        return DaemonReading(
            rss: rss, anon: anon, descriptors: targets.count, connections: connections,
            reportedConnections: reported, subscriptions: subscriptions, targets: targets)
    }

    /// The targets of the links in `/proc/PID/fd`, sockets without their inode so that two readings compare.
    static func descriptorTargets(of pid: Int32) -> [String] {
        let directory = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { name -> String? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + name)
            else { return nil }
            return target.hasPrefix("socket:") ? "socket" : target
        }.sorted()
    }

    /// The descriptors of `self` that `earlier` did not have (sockets count apart from connections).
    func extraTargets(since earlier: DaemonReading) -> [String] {
        var remaining = targets
        for target in earlier.targets {
            if let index = remaining.firstIndex(of: target) { remaining.remove(at: index) }
        }
        return remaining
    }
}
