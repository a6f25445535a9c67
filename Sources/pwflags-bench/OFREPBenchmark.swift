import Foundation
import PWFlagsTestKit
import UnixIO

/// OFREP's bulk evaluation next to the line protocol's `getAll`, on the same daemon and flags: each a
/// sequential round trip on one kept-open connection over a Unix socket (README, OpenFeature).
enum OFREPBenchmark {
    static let sizes = [100, 1_000]

    static func run(bench: Benchmark, quick: Bool, report: Report) throws {
        for size in sizes {
            let section = "OFREP bulk vs getAll, \(size) flags"
            let folder = try TemporaryDirectory(prefix: "pwo")
            defer { folder.remove() }
            let ofrepPath = folder.file("ofrep.sock")
            let daemon = try bench.localDaemon(
                flags: size, name: "ofrep\(size)", extra: "[OFREP]\nListenAddress=\(ofrepPath)\nRequestRate=0")
            defer { daemon.cleanUp() }
            let repeats = quick ? 200 : 2_000

            let line = try LineClient(path: daemon.socketPath)
            let getAll = Array(#"{"id":1,"method":"getAll"}"#.utf8) + [0x0A]
            var lineTimes = try samples(repeats) {
                try line.send(getAll)
                _ = line.readLine()
            }
            let http = try HTTPClient(unixSocket: ofrepPath)
            let bulk = Array(HTTPClient.post("/ofrep/v1/evaluate/flags").utf8)
            var tag = ""
            var bytes = 0
            var bulkTimes = samples(repeats) {
                http.send(bulk)
                let response = http.readResponse()
                tag = response?.headers["etag"] ?? ""
                bytes = response?.body.count ?? 0
            }
            let conditional = Array(
                HTTPClient.post("/ofrep/v1/evaluate/flags", headers: ["If-None-Match: \(tag)"]).utf8)
            var notModifiedTimes = samples(repeats) {
                http.send(conditional)
                _ = http.readResponse()
            }
            let lineP50 = Measure.percentile(&lineTimes, 50) / 1000
            let bulkP50 = Measure.percentile(&bulkTimes, 50) / 1000
            report.add(section, "getAll p50", lineP50, "µs")
            report.add(section, "OFREP bulk p50", bulkP50, "µs")
            report.add(section, "OFREP bulk 304 p50", Measure.percentile(&notModifiedTimes, 50) / 1000, "µs")
            report.add(section, "OFREP bulk bytes", Double(bytes), "B")
            report.add(section, "bulk to getAll ratio", bulkP50 / lineP50, "x")
        }
    }

    /// The nanoseconds each of `count` runs of `body` took.
    private static func samples(_ count: Int, _ body: () throws -> Void) rethrows -> [UInt64] {
        var times: [UInt64] = []
        times.reserveCapacity(count)
        for _ in 0..<count {
            let start = MonotonicClock.nanoseconds()
            try body()
            times.append(MonotonicClock.nanoseconds() - start)
        }
        return times
    }
}
