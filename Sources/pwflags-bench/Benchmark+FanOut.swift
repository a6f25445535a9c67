import FlagsCore
import Foundation
import PWFlagsTestKit
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Fan-out: from a change (the flags file, an upstream reply) to the last of many subscribers holding it.
extension Benchmark {
    /// From a change of the flags file to the last of `subscribers` holding its `flagsChanged`.
    func fileFanOut(subscribers counts: [Int]) throws {
        let daemon = try localDaemon(flags: 100, name: "fanout")
        defer { daemon.cleanUp() }
        let section = "fan-out from a flags-file change"
        var variant = 0
        for count in counts {
            let clients = try subscribe(count, to: daemon.socketPath)
            variant += 1
            let text = Measure.flagsFile(Measure.flags(100, variant: variant))
            let start = MonotonicClock.nanoseconds()
            try daemon.directory.write("flags.json", text)
            guard let last = Load.waitForLine(on: clients) else {
                report.add(section, "\(count) subscribers", .nan, "ms")
                continue
            }
            let milliseconds = Double(last - start) / 1e6
            if count == 1000 {
                report.add(section, "\(count) subscribers", milliseconds, "ms", target: "≤ 50", met: milliseconds <= 50)
            } else {
                report.add(section, "\(count) subscribers", milliseconds, "ms")
            }
        }
    }

    /// From a `refresh` whose upstream reply changes the flags to the last subscriber's `flagsChanged`.
    ///
    /// On the main actor: the daemon's parent-death signal follows the thread that started it, and the main
    /// thread is the one that lasts as long as the benchmark.
    @MainActor
    func upstreamFanOut(subscribers counts: [Int]) async throws {
        let server = try FakePushwooshServer.start()
        defer { server.stop() }
        server.setDefaultReply(.flags(Measure.flags(100)), for: "getFeatureFlags")
        let daemon = try DaemonProcess(
            config: """
                [Pushwoosh]
                ApplicationCode=BENCH-00001
                ServerURL=\(server.baseURL)
                HWID=bench
                [FeatureFlags]
                DisableThrottle=yes
                [Daemon]
                MaxConnections=8192
                LogLevel=warning
                """,
            launcher: DaemonProcess.parentDeathLauncher
        )
        defer { daemon.cleanUp() }
        _ = try await server.waitForRequests(count: 1)
        let control = try LineClient(path: daemon.socketPath)
        let section = "fan-out from an upstream reply (refresh)"
        var variant = 0
        for count in counts {
            let clients = try subscribe(count, to: daemon.socketPath)
            variant += 1
            server.enqueue(.flags(Measure.flags(100, variant: variant)), for: "getFeatureFlags")
            // The daemon sends a caller's refresh at least a second after its previous request (docs/reliability.md,
            // Rate limits towards Pushwoosh); waiting that out first keeps the spacing out of the figure, which is the
            // fan-out.
            try await Task.sleep(for: .milliseconds(1_100))
            let start = MonotonicClock.nanoseconds()
            try control.send(Array(#"{"id":1,"method":"refresh"}"#.utf8) + [0x0A])
            guard let last = Load.waitForLine(on: clients) else {
                report.add(section, "\(count) subscribers", .nan, "ms")
                continue
            }
            control.readLine()
            report.add(section, "\(count) subscribers", Double(last - start) / 1e6, "ms")
        }
    }

    /// `count` connections, each subscribed to every key, their snapshots read.
    func subscribe(_ count: Int, to path: String) throws -> [LineClient] {
        let clients = try (0..<count).map { _ in try LineClient(path: path) }
        let listen = Array(#"{"id":1,"method":"listen"}"#.utf8) + [0x0A]
        for client in clients { try client.send(listen) }
        for client in clients { client.readLine() }
        return clients
    }
}
