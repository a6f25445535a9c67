import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A daemon out of file descriptors: connections wait in the backlog, and the daemon neither spins nor floods
/// its log while they do.
@Suite(.hangLimit) struct DescriptorExhaustionTests {
    @Test func runningOutOfDescriptorsNeitherSpinsNorFloodsTheLogAndServingResumes() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let pid = daemon.process.processIdentifier
        let checker = try daemon.connect()
        #expect(try checker.call("status")?["result"]?["connections"] == 1)
        // Room for exactly 16 more descriptors (MaxConnections stays at 256).
        try Self.leaveRoom(for: 16, in: pid)
        var clients = try (0..<40).map { _ in try daemon.connect() }
        // The last ones wait in the backlog: once the daemon says it met EMFILE, its CPU is measured over a
        // second (a rate needs a span; the wait before it is on the log line, not a guess).
        #expect(try clients[0].call("status")?["result"] != nil)
        #expect(Eventually.blockingWait { daemon.log.contains("out of file descriptors") }, "EMFILE never met")
        let before = try #require(ProcessStatus(pid: pid))
        Self.measuringSpan()
        let after = try #require(ProcessStatus(pid: pid))
        let spent = after.cpuTicks - before.cpuTicks
        #expect(spent < 30, "the daemon used \(spent) ticks of CPU in 1 s while out of descriptors")
        let logged = daemon.log.components(separatedBy: "out of file descriptors").count - 1
        #expect(logged >= 1 && logged <= 3, "\(logged) lines about descriptors")
        #expect(try checker.call("get", ["key": "dark_mode"])?["result"]?["flag"]?["key"] == "dark_mode")
        // Once connections close, the waiting ones are accepted and served.
        let waiting = clients.removeLast()
        clients.removeAll()
        let answer = try waiting.call("get", ["key": "search_v2"], timeout: .seconds(10))
        #expect(answer?["result"]?["flag"]?["key"] == "search_v2")
        #expect(daemon.isRunning)
    }

    /// The OFREP listener runs on the same engine: out of descriptors it waits the same way, logs at most once a
    /// second, and serves the waiting clients once others close.
    @Test func theOFREPListenerOutOfDescriptorsNeitherSpinsNorFloodsTheLogAndServingResumes() throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        let pid = rig.daemon.process.processIdentifier
        let checker = try rig.client()
        #expect(checker.send(HTTPClient.post(OFREPRig.single("banner"))))
        #expect(checker.readResponse()?.status == 200)
        try Self.leaveRoom(for: 16, in: pid)
        var clients = try (0..<40).map { _ in try rig.client() }
        // The first ones are accepted; the last ones wait in the backlog while the daemon meets EMFILE.
        #expect(clients[0].send(HTTPClient.post(OFREPRig.single("banner"))))
        #expect(clients[0].readResponse()?.status == 200)
        let met = Eventually.blockingWait { rig.daemon.log.contains("OFREP: out of file descriptors") }
        #expect(met, "EMFILE never met")
        let before = try #require(ProcessStatus(pid: pid))
        Self.measuringSpan()
        let after = try #require(ProcessStatus(pid: pid))
        let spent = after.cpuTicks - before.cpuTicks
        #expect(spent < 30, "the daemon used \(spent) ticks of CPU in 1 s while out of descriptors")
        let logged = rig.daemon.log.components(separatedBy: "OFREP: out of file descriptors").count - 1
        #expect(logged >= 1 && logged <= 3, "\(logged) lines about descriptors:\n\(rig.daemon.log.suffix(2000))")
        #expect(checker.send(HTTPClient.post(OFREPRig.single("banner"))))
        #expect(checker.readResponse()?.status == 200)
        // Once connections close, the waiting ones are accepted and served.
        let waiting = clients.removeLast()
        clients.removeAll()
        #expect(waiting.send(HTTPClient.post(OFREPRig.single("banner"))))
        #expect(waiting.readResponse()?.status == 200)
        #expect(rig.daemon.isRunning)
    }

    /// Lowers process `pid`'s descriptor limit so that exactly `room` more descriptors fit. New descriptors take
    /// the lowest free numbers and the limit bounds the number, so this counts the free numbers below it: a
    /// sanitizer runtime may hold a descriptor far above the others.
    static func leaveRoom(for room: Int, in pid: Int32) throws {
        let open = Set(
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).compactMap { Int($0) })
        var limit = 0
        var free = 0
        while free < room {
            if !open.contains(limit) { free += 1 }
            limit += 1
        }
        try Command.run("/usr/bin/prlimit", ["--pid", String(pid), "--nofile=\(limit):\(limit)"])
    }

    /// The span over which a daemon out of descriptors is watched for spinning: a rate of CPU time, measured, not a
    /// stand-in for a signal.
    static func measuringSpan() {
        usleep(1_000_000)
    }
}
