import FlagsCore
import PWFlagsTestKit
import UnixIO

/// The daemon's Varlink listener (docs/varlink.md): a `Get` round trip against the line protocol's `get` of the
/// same flag on the same daemon, in one run, so that the ratio is what Varlink's framing costs. Both are served
/// by the one event loop, so nothing is pinned: the scheduler places both paths alike.
enum VarlinkBenchmark {
    static let section = "Varlink"

    static func run(bench: Benchmark, extent: Extent, report: Report) throws {
        let folder = try TemporaryDirectory(prefix: "pwv")
        defer { folder.remove() }
        let socketPath = folder.file("varlink.sock")
        let daemon = try bench.localDaemon(flags: 100, name: "varlink", extra: "[Varlink]\nSocketPath=\(socketPath)")
        defer { daemon.cleanUp() }
        let line = try daemon.connect()
        let varlink = try VarlinkClient(socketPath: socketPath)
        let count = extent.pick(full: 10_000, quick: 2_000, smoke: 50)
        let varlinkCall = VarlinkClient.message("Get", ["key": "flag_7"])
        let lineGet = RoundTrips.lineGet("flag_7", on: line)
        func lineRounds(_ rounds: Int) throws -> Double { try RoundTrips.mean(rounds, lineGet) }
        func varlinkRounds(_ rounds: Int) throws -> Double {
            try RoundTrips.mean(rounds) {
                try varlink.send(varlinkCall)
                guard varlink.replyText() != nil else { throw SystemError("read", errno: 0) }
            }
        }
        // Warm both paths, then alternate rounds so that a busy moment falls on both alike.
        _ = try lineRounds(count / 10)
        _ = try varlinkRounds(count / 10)
        var lineTimes: [Double] = []
        var varlinkTimes: [Double] = []
        for _ in 0..<5 {
            lineTimes.append(try lineRounds(count / 5))
            varlinkTimes.append(try varlinkRounds(count / 5))
        }
        let lineMedian = lineTimes.sorted()[2]
        let varlinkMedian = varlinkTimes.sorted()[2]
        report.add(section, "line protocol get round trip", lineMedian / 1000, "µs")
        report.add(section, "Varlink Get round trip", varlinkMedian / 1000, "µs")
        let ratio = varlinkMedian / lineMedian
        report.add(section, "Varlink Get against line get", ratio, "x", target: "≤ 1.3x", met: ratio <= 1.3)
    }
}
