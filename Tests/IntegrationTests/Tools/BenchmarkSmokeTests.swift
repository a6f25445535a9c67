import FlagsCore
import Foundation
import TestSupport
import Testing

/// The benchmark runs and reports every figure. No timing is asserted here: figures are for people
/// (docs/performance.md), and a slow machine must not fail the suite. `--smoke` makes a few calls of each
/// measurement, so this shows every path of the bench in seconds and leaves the figures to the bench itself.
@Suite(.hangLimit) struct BenchmarkSmokeTests {
    /// Every figure `pwflags-bench` must report: (section prefix, name).
    static var expected: [(String, String)] {
        var figures: [(String, String)] = [
            ("get, 1 client, sequential", "pwflagsd p50"), ("get, 1 client, sequential", "pwflagsd p99"),
            ("get, 1 client, sequential", "pwflagsd calls/s"), ("get, 1 client, sequential", "echo floor p50"),
            ("get, 1 client, sequential", "echo floor p99"), ("get, 1 client, sequential", "p50 ratio to floor"),
            ("get, 1 client, sequential", "p99 ratio to floor"),
            ("client library mirror get", "single thread"), ("client library mirror get", "2 threads at once"),
            ("C library (libpwflags)", "get + one property, single thread"),
            ("C library (libpwflags)", "RSS growth: load the library, open a client"),
            ("C library (libpwflags)", "a change reaching 1000 C clients"),
            ("memory, idle, 1,000 flags", "RssAnon"), ("memory, idle, 1,000 flags", "VmRSS"),
            ("footprint", "pwflagsd stripped"), ("footprint", "pwflags stripped"),
            ("memory, 10,000 flags, 1,000 subscribers, under load", "RssAnon"),
            ("memory, 10,000 flags, 1,000 subscribers, under load", "RSS"),
            ("startup", "minimal Swift program (pwflags-bench-floor), exec to exit"),
            ("startup", "the same with libsystemd loaded, exec to exit"),
            ("startup", "pwflagsd --version, exec to exit"), ("startup", "exec to READY=1, 0 cached flags"),
            ("startup", "exec to READY=1, 1000 cached flags"), ("startup", "exec to READY=1, 10000 cached flags"),
            ("startup", "ratio, 1000 flags"), ("startup", "exec to the first get answered, 1000 cached flags"),
        ]
        for clients in [1, 4, 16, 64] {
            for name in ["pwflagsd calls/s", "echo floor calls/s", "ratio to floor"] {
                figures.append(("get throughput, \(clients) clients", name))
            }
        }
        for section in ["fan-out from a flags-file change", "fan-out from an upstream reply"] {
            for count in [1, 100, 1000] { figures.append((section, "\(count) subscribers")) }
        }
        for size in [10, 1000, 10000] {
            for name in ["getAll time", "getAll bytes", "listen snapshot time", "listen snapshot bytes"] {
                figures.append(("scale, \(size) flags", name))
            }
        }
        for size in [100, 1000] {
            for name in [
                "getAll p50", "OFREP bulk p50", "OFREP bulk 304 p50", "OFREP bulk bytes", "bulk to getAll ratio",
            ] {
                figures.append(("OFREP bulk vs getAll, \(size) flags", name))
            }
        }
        for name in [
            "line protocol flagsChanged p50", "OFREP event p50", "line protocol flagsChanged p99", "OFREP event p99",
        ] {
            figures.append(("push from a flags-file change", name))
        }
        return figures
    }

    @Test("pwflags-bench --smoke runs and writes every figure, as a table and as JSON")
    func quickRunReportsEveryFigure() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let jsonPath = directory.file("bench.json")
        // A bench that hangs is killed and fails the test, before the suite's time limit would.
        let outcome = try Command.run(
            DaemonProcess.executable("pwflags-bench"), ["--smoke", "--json", jsonPath], check: false,
            timeout: .seconds(180))
        let table = outcome.stdout
        #expect(outcome.status == 0, "\(outcome.stderr.suffix(3000))")
        let json = try JSONValue(parsing: String(contentsOfFile: jsonPath, encoding: .utf8))
        let figures = try #require(json["figures"]?.arrayValue)
        #expect(json["machine"]?["cores"] != nil)
        for (section, name) in Self.expected {
            let figure = figures.first {
                $0["section"]?.stringValue?.hasPrefix(section) == true && $0["name"]?.stringValue == name
            }
            let value = figure?["value"]?.numberValue
            #expect(value.map { $0 > 0 } == true, "\(section) / \(name): \(String(describing: figure))")
            #expect(table.contains("| \(name) |"), "the table lacks \(name)")
        }
        // An idle daemon may not wake at all: the wakeup rows are reported, and never negative.
        for name in ["wakeups per minute, no watchdog", "wakeups per minute, WatchdogSec=20s"] {
            let figure = figures.first {
                $0["section"]?.stringValue?.hasPrefix("idle wakeups") == true && $0["name"]?.stringValue == name
            }
            #expect(figure?["value"]?.numberValue.map { $0 >= 0 } == true, "\(name): \(String(describing: figure))")
            #expect(table.contains("| \(name) |"), "the table lacks \(name)")
        }
    }

    @Test("pwflags-bench --call-soak passes on a few kinds of every surface and reports both halves")
    func shortCallSoakPasses() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let jsonPath = directory.file("call-soak.json")
        let kinds = "line.get,line.refresh,bus.Get,bus.LogImpression,varlink.Get,ofrep.one"
        let outcome = try Command.run(
            DaemonProcess.executable("pwflags-bench"), ["--call-soak", "4", "--kinds", kinds, "--json", jsonPath],
            check: false, timeout: .seconds(120))
        #expect(outcome.status == 0, "\(outcome.stdout.suffix(2000)) \(outcome.stderr.suffix(2000))")
        let json = try JSONValue(parsing: String(contentsOfFile: jsonPath, encoding: .utf8))
        let figures = (json["figures"]?.arrayValue ?? []).filter { $0["section"]?.stringValue == "call soak" }
        let names = figures.compactMap { $0["name"]?.stringValue }
        #expect(names.contains { $0.hasPrefix("RssAnon after 4 s of every kind (") }, "\(names)")
        #expect(names.contains { $0.hasPrefix("RssAnon over the second half (") }, "\(names)")
        // Calls were made in both halves: the counts in the names are not 0.
        #expect(!names.contains { $0.contains("(0 calls)") }, "\(names)")
    }
}
