import FlagsCore
import Foundation
import TestSupport
import Testing

/// `metrics`, `pwflags metrics` and `MetricsFile=` on the real daemon, the text checked by prometheus-client's
/// own parsers.
@Suite(.serialized, .hangLimit) struct MetricsTests {
    static func metrics(on session: SocketSession, format: String = "openmetrics") throws -> [JSONValue] {
        let text = try #require(try session.result("metrics", ["format": .string(format)])?["text"]?.stringValue)
        return try PrometheusParser.parse(text, format: format)
    }

    /// The metrics of the table in docs/operations.md (Metrics and node_exporter), as prometheus-client names
    /// their families: a counter without its `_total`.
    static func documentedFamilies() throws -> Set<String> {
        let page = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        var names: Set<String> = []
        for line in page.split(separator: "\n") where line.hasPrefix("| `pwflagsd_") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2 else { continue }
            let name = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            names.insert(cells[1] == "counter" && name.hasSuffix("_total") ? String(name.dropLast(6)) : name)
        }
        return names
    }

    @Test("Both formats parse with prometheus-client, and name exactly the metrics docs/operations.md lists")
    func textParses() throws {
        let documented = try Self.documentedFamilies()
        #expect(documented.count >= 15, "\(documented.sorted())")
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        _ = try session.get("new_checkout")
        for format in ["openmetrics", "prometheus"] {
            let families = try Self.metrics(on: session, format: format)
            let names = Set(families.compactMap { $0["name"]?.stringValue })
            #expect(names == documented, "\(format): served \(names.sorted()), documented \(documented.sorted())")
            #expect(PrometheusParser.value("pwflagsd_flags", in: families) == Double(Fixtures.all.count))
            #expect(PrometheusParser.value("pwflagsd_connections", in: families) == 1)
        }
        let cli = try CLI.run(["--socket", daemon.socketPath, "metrics"])
        #expect(cli.status == 0)
        #expect(cli.stdout.hasSuffix("# EOF\n"))
        _ = try PrometheusParser.parse(cli.stdout, format: "openmetrics")
        let prometheus = try CLI.run(["--socket", daemon.socketPath, "metrics", "--format", "prometheus"])
        #expect(!prometheus.stdout.contains("# EOF"))
        #expect(prometheus.stdout.contains("# TYPE pwflagsd_requests_total counter\n"))
        _ = try PrometheusParser.parse(prometheus.stdout, format: "prometheus")
        #expect(try CLI.run(["--socket", daemon.socketPath, "metrics", "--format", "json"]).status == 2)
        #expect(try CLI.run(["metrics", "--help"]).status == 0)
    }

    @Test("OFREP requests are counted by endpoint and HTTP status, refusals of malformed requests among them")
    func ofrepRequestsAreCounted() throws {
        let rig = try OFREPRig()
        defer { rig.cleanUp() }
        for _ in 0..<3 { _ = try rig.post(OFREPRig.single("new_checkout")) }
        _ = try rig.post(OFREPRig.single("no_such_flag"))
        _ = try rig.post(OFREPRig.bulk)
        _ = try rig.post("/elsewhere")
        let garbage = try rig.client()
        _ = garbage.send("NOT HTTP\r\n\r\n")
        _ = garbage.readResponse()
        let session = try SocketSession(socketPath: rig.daemon.socketPath)
        let families = try Self.metrics(on: session)
        let name = "pwflagsd_ofrep_requests_total"
        #expect(PrometheusParser.value(name, ["endpoint": "single", "status": "200"], in: families) == 3)
        #expect(PrometheusParser.value(name, ["endpoint": "single", "status": "404"], in: families) == 1)
        #expect(PrometheusParser.value(name, ["endpoint": "bulk", "status": "200"], in: families) == 1)
        #expect(PrometheusParser.value(name, ["endpoint": "other", "status": "404"], in: families) == 1)
        #expect(PrometheusParser.value(name, ["endpoint": "other", "status": "400"], in: families) == 1)
    }

    @Test("Requests, errors, impressions and subscriptions move with what clients do")
    func countersMove() throws {
        let daemon = try DaemonProcess.serving(Fixtures.all)
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        for _ in 0..<5 { _ = try session.get("new_checkout") }
        _ = try session.call("isEnabled", ["key": "new_checkout", "default": true])
        _ = try session.call("noSuchMethod")
        _ = try session.call("get", ["key": 5])
        _ = try session.call("logImpression", ["key": "new_checkout"])
        _ = try session.call("logImpression", ["key": "nope"])
        _ = try session.call("listen", ["keys": ["new_checkout"]])
        let families = try Self.metrics(on: session)
        #expect(PrometheusParser.value("pwflagsd_requests_total", ["method": "get"], in: families) == 5)
        #expect(PrometheusParser.value("pwflagsd_requests_total", ["method": "isEnabled"], in: families) == 1)
        #expect(PrometheusParser.value("pwflagsd_requests_total", ["method": "logImpression"], in: families) == 2)
        #expect(PrometheusParser.value("pwflagsd_errors_total", ["code": "-32601"], in: families) == 1)
        #expect(PrometheusParser.value("pwflagsd_errors_total", ["code": "-32602"], in: families) == 1)
        #expect(PrometheusParser.value("pwflagsd_impressions_total", ["outcome": "logged"], in: families) == 1)
        #expect(PrometheusParser.value("pwflagsd_impressions_total", ["outcome": "noFlag"], in: families) == 1)
        #expect(PrometheusParser.value("pwflagsd_subscriptions", in: families) == 1)
    }

    @Test("Refreshes count by trigger, outcome and R11 status; the age of the flags served is reported")
    func refreshesCount() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["DisableThrottle": "yes"])
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(try session.result("refresh")?["fromNetwork"] == true)
        server.setDefaultReply(.status(503), for: "getFeatureFlags")
        #expect(try session.call("refresh")?["error"]?["code"] == -32000)
        let families = try Self.metrics(on: session)
        let started = ["trigger": "sessionStart", "outcome": "complete", "status": "200"]
        #expect(PrometheusParser.value("pwflagsd_refreshes_total", started, in: families) == 1)
        let called = ["trigger": "call", "outcome": "complete", "status": "200"]
        #expect(PrometheusParser.value("pwflagsd_refreshes_total", called, in: families) == 1)
        let failed = ["trigger": "call", "outcome": "failed", "status": "503"]
        #expect(PrometheusParser.value("pwflagsd_refreshes_total", failed, in: families) == 1)
        #expect(PrometheusParser.value("pwflagsd_errors_total", ["code": "-32000"], in: families) == 1)
        #expect((PrometheusParser.value("pwflagsd_flags_age_seconds", in: families) ?? -1) >= 0)
    }

    @Test("A change that reaches a subscriber adds a sample to the propagation histogram")
    func propagationHistogram() async throws {
        let daemon = try DaemonProcess.serving([Fixtures.checkout])
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(
            PrometheusParser.value("pwflagsd_change_propagation_seconds_count", in: try Self.metrics(on: session))
                == 0)
        let listener = try SocketSession(socketPath: daemon.socketPath)
        _ = try listener.call("listen")
        try daemon.writeFlags([Fixtures.checkout, Fixtures.search])
        #expect(listener.nextNotification() != nil)
        let families = try Self.metrics(on: session)
        #expect(PrometheusParser.value("pwflagsd_change_propagation_seconds_count", in: families) == 1)
        let inf = PrometheusParser.value("pwflagsd_change_propagation_seconds_bucket", ["le": "+Inf"], in: families)
        #expect(inf == 1)
        // No subscriber, no sample.
        _ = try listener.call("unlisten", ["subscription": "s1"])
        try daemon.writeFlags([Fixtures.checkout])
        #expect(try await Eventually.wait { try session.keys() == ["new_checkout"] })
        #expect(
            PrometheusParser.value("pwflagsd_change_propagation_seconds_count", in: try Self.metrics(on: session))
                == 1)
    }

    @Test("MetricsFile is replaced atomically every MetricsInterval, mode 0644, in the 0.0.4 text format")
    func metricsFile() async throws {
        let directory = try TemporaryDirectory(prefix: "pwmet")
        defer { directory.remove() }
        let path = directory.file("pwflagsd.prom")
        let daemon = try DaemonProcess.serving(
            Fixtures.all, extra: "[Daemon]\nMetricsFile=\(path)\nMetricsInterval=200ms\n")
        defer { daemon.cleanUp() }
        #expect(await Eventually.wait { FileManager.default.fileExists(atPath: path) })
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o644)
        let session = try SocketSession(socketPath: daemon.socketPath)
        for _ in 0..<3 { _ = try session.get("new_checkout") }
        // Every read finds a whole file (its last line is the last family's), until one shows the gets.
        var reads: [String] = []
        let updated = try await Eventually.wait {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            reads.append(text)
            return text.contains("pwflagsd_requests_total{method=\"get\"} 3\n")
        }
        #expect(updated)
        #expect(reads.allSatisfy { $0.hasSuffix("pwflagsd_change_propagation_seconds_count 0\n") })
        let families = try PrometheusParser.parse(try #require(reads.last), format: "prometheus")
        #expect(PrometheusParser.value("pwflagsd_requests_total", ["method": "get"], in: families) == 3)
        // Every 200 ms a write may be under way (its temporary beside the file): stopped, the daemon leaves none.
        daemon.stop()
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(leftovers == ["pwflagsd.prom"])
    }

    @Test("MetricsFile must be an absolute path")
    func metricsFileMustBeAbsolute() throws {
        let directory = try TemporaryDirectory(prefix: "pwcfg")
        defer { directory.remove() }
        try directory.write("pwflagsd.conf", "[Daemon]\nMetricsFile=x.prom\n")
        let check = try Command.run(
            DaemonProcess.executable("pwflagsd"), ["--check-config", "--config", directory.file("pwflagsd.conf")],
            check: false)
        #expect(check.status == 1)
        #expect((check.stdout + check.stderr).contains("MetricsFile"), "\(check)")
    }
}
