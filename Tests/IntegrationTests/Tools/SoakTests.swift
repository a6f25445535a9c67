import FlagsCore
import Foundation
import TestSupport
import Testing

/// pwflags-soak in its shortest form, against the daemon built next to it: it must pass and report every figure
/// docs/reliability.md quotes.
@Suite(.hangLimit) struct SoakTests {
    /// The figures docs/reliability.md quotes: memory and descriptors at start and end, load, changes, churn, checks.
    static let figures = [
        "VmRSS at start", "VmRSS at end", "RssAnon at start", "RssAnon at end", "VmRSS growth",
        "open fds at start", "open fds at end", "fds beyond connections, end − start",
        "fds beyond connections, closed − start", "requests served", "request errors", "flag file changes",
        "daemon revisions", "raw opened", "raw closed", "library mirrors opened", "library mirrors closed",
        "notifications applied", "open subscribers equal to getAll", "states checked against getAll's history",
        "lost notifications", "mismatches",
    ]

    @Test("a 5-second soak passes and prints every figure")
    func shortSoakPasses() throws {
        let directory = try TemporaryDirectory(prefix: "pwsoak")
        defer { directory.remove() }
        let jsonPath = directory.file("soak.json")
        let outcome = try CLI.run(
            ["--seconds", "5", "--json", jsonPath], executable: "pwflags-soak", timeout: .seconds(90))
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stdout.contains("pwflags-soak: PASS"), "\(outcome)")
        for figure in Self.figures {
            #expect(outcome.stdout.contains("| \(figure) | "), "missing \(figure)")
        }
        let report = try JSONValue(parsing: String(contentsOfFile: jsonPath, encoding: .utf8))
        #expect(report["verdict"] == "PASS")
        let values = report["figures"]?.arrayValue ?? []
        #expect(values.count >= Self.figures.count)
        // Every figure was measured: none is null (n/a).
        #expect(values.allSatisfy { $0["value"]?.numberValue != nil })
        // The run did something: calls answered, files changed, subscribers came and went.
        func value(_ name: String) -> Double {
            values.first { $0["name"]?.stringValue == name }?["value"]?.numberValue ?? 0
        }
        #expect(value("requests served") > 1000)
        #expect(value("flag file changes") >= 3)
        #expect(value("raw opened") >= 4)
        #expect(value("library mirrors opened") >= 2)
    }

    /// A soak outlasts the daemon's `IdleConnectionTimeout` and still ends with its verdict: its own questions
    /// go on a connection opened for each. Before, it kept one from the warm-up to the end, the daemon closed it
    /// as idle after 5 min, and a 20-minute run ended in "write: Broken pipe" with no verdict and no JSON.
    @Test("a soak longer than the daemon's idle timeout still passes with a verdict")
    func aSoakOutlastsTheIdleTimeout() throws {
        let directory = try TemporaryDirectory(prefix: "pwsoak")
        defer { directory.remove() }
        let jsonPath = directory.file("soak.json")
        // 2 s of idle timeout: the warm-up ends after 1 s, the final reading comes 11 s later.
        let outcome = try CLI.run(
            ["--seconds", "12", "--idle-timeout", "2", "--json", jsonPath], executable: "pwflags-soak",
            timeout: .seconds(120))
        #expect(outcome.status == 0, "\(outcome)")
        let report = try JSONValue(parsing: String(contentsOfFile: jsonPath, encoding: .utf8))
        #expect(report["verdict"] == "PASS", "\(report["errors"] ?? [])")
    }
}
