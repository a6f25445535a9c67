import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A daemon out of file descriptors: connections wait in the backlog, and the daemon neither spins nor floods
/// its log while they do.
@Suite struct DescriptorExhaustionTests {
    @Test func runningOutOfDescriptorsNeitherSpinsNorFloodsTheLogAndServingResumes() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let pid = daemon.process.processIdentifier
        let checker = try daemon.connect()
        #expect(try checker.call("status")?["result"]?["connections"] == 1)
        // Room for exactly 16 more descriptors (MaxConnections stays at 256). New descriptors take the lowest free
        // numbers and the limit bounds the number, so count the free numbers below it: a sanitizer runtime may
        // hold a descriptor far above the others.
        let open = Set(
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).compactMap { Int($0) })
        var limit = 0
        var free = 0
        while free < 16 {
            if !open.contains(limit) { free += 1 }
            limit += 1
        }
        try Command.run("/usr/bin/prlimit", ["--pid", String(pid), "--nofile=\(limit):\(limit)"])
        var clients = try (0..<40).map { _ in try daemon.connect() }
        // The last ones wait in the backlog: give the daemon a moment to meet EMFILE, then watch it for a second.
        #expect(try clients[0].call("status")?["result"] != nil)
        let before = try #require(ProcessStatus(pid: pid))
        usleep(1_000_000)
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
}
