import Foundation
import PWFlagsTestKit
import UnixIO

/// OFREP's bulk evaluation next to the line protocol's `getAll`, on the same daemon and flags: each a
/// sequential round trip on one kept-open connection over a Unix socket (docs/openfeature.md).
enum OFREPBenchmark {
    static let sizes = [100, 1_000]

    static func run(bench: Benchmark, extent: Extent, report: Report) throws {
        for size in sizes {
            let section = "OFREP bulk vs getAll, \(size) flags"
            let folder = try TemporaryDirectory(prefix: "pwo")
            defer { folder.remove() }
            let ofrepPath = folder.file("ofrep.sock")
            let daemon = try bench.localDaemon(
                flags: size, name: "ofrep\(size)", extra: "[OFREP]\nListenAddress=\(ofrepPath)\nRequestRate=0")
            defer { daemon.cleanUp() }
            let repeats = extent.pick(full: 2_000, quick: 200, smoke: 10)

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

    /// From a change of the flags file to a `refetchEvaluation` event at a connected OFREP event stream, beside the
    /// same change's `flagsChanged` at a line protocol subscriber: both wait on the same epoll-free `poll`, so each
    /// is stamped when its bytes arrive.
    static func pushLatency(bench: Benchmark, extent: Extent, report: Report) throws {
        let section = "push from a flags-file change, 100 flags (OFREP event stream beside the line protocol)"
        let folder = try TemporaryDirectory(prefix: "pwp")
        defer { folder.remove() }
        let ofrepPath = folder.file("ofrep.sock")
        let daemon = try bench.localDaemon(
            flags: 100, name: "push", extra: "[OFREP]\nListenAddress=\(ofrepPath)\nRequestRate=0")
        defer { daemon.cleanUp() }
        let http = try HTTPClient(unixSocket: ofrepPath)
        guard let answer = http.post("/ofrep/v1/evaluate/flags"),
            let target = answer.json?["eventStreams"]?.arrayValue?.first?["endpoint"]?["requestUri"]?.stringValue
        else {
            report.add(section, "OFREP event p50", .nan, "ms")
            return
        }
        let stream = try EventStreamClient(unixSocket: ofrepPath)
        guard stream.open(target) == 200, stream.next() != nil else {
            report.add(section, "OFREP event p50", .nan, "ms")
            return
        }
        let line = try bench.subscribe(1, to: daemon.socketPath)[0]
        var streamTimes: [UInt64] = []
        var lineTimes: [UInt64] = []
        for round in 0..<extent.pick(full: 100, quick: 20, smoke: 3) {
            let text = Measure.flagsFile(Measure.flags(100, variant: round + 1))
            let start = MonotonicClock.nanoseconds()
            try daemon.directory.write("flags.json", text)
            var streamAt: UInt64?
            var lineAt: UInt64?
            let deadline = start + 10_000_000_000
            while streamAt == nil || lineAt == nil, MonotonicClock.nanoseconds() < deadline {
                var waiting: [Int32] = []
                if streamAt == nil { waiting.append(stream.fd) }
                if lineAt == nil { waiting.append(line.fd) }
                guard let ready = Descriptor.waitReadable(waiting, milliseconds: 1000) else { continue }
                let now = MonotonicClock.nanoseconds()
                for index in ready {
                    if waiting[index] == stream.fd { streamAt = now } else { lineAt = now }
                }
            }
            guard let streamAt, let lineAt, stream.nextEvent() != nil, line.readLine() != nil else {
                report.add(section, "OFREP event p50", .nan, "ms")
                return
            }
            streamTimes.append(streamAt - start)
            lineTimes.append(lineAt - start)
        }
        report.add(section, "line protocol flagsChanged p50", Measure.percentile(&lineTimes, 50) / 1e6, "ms")
        report.add(section, "OFREP event p50", Measure.percentile(&streamTimes, 50) / 1e6, "ms")
        report.add(section, "line protocol flagsChanged p99", Measure.percentile(&lineTimes, 99) / 1e6, "ms")
        report.add(section, "OFREP event p99", Measure.percentile(&streamTimes, 99) / 1e6, "ms")
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
