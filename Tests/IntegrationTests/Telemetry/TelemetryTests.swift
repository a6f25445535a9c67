import FlagsCore
import Foundation
import TestSupport
import Testing

/// OTLP/HTTP telemetry on the real daemon, against a collector stand-in on loopback (the fake HTTP server), every
/// body decoded with opentelemetry-proto's own definitions.
@Suite(.hangLimit) struct TelemetryTests {
    /// A collector stand-in that takes every export.
    static func collector() throws -> FakePushwooshServer {
        let server = try FakePushwooshServer.start()
        server.setDefaultReply(.ok)
        return server
    }

    /// The variables of a daemon exporting to `collector` every `interval` milliseconds.
    static func environment(_ collector: FakePushwooshServer, interval: Int = 200, extra: [String: String] = [:])
        -> [String: String]
    {
        var environment = [
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(collector.port)",
            "OTEL_METRIC_EXPORT_INTERVAL": String(interval),
            "OTEL_BLRP_SCHEDULE_DELAY": String(interval),
        ]
        environment.merge(extra) { $1 }
        return environment
    }

    /// The `index`th request to `v1/<signal>` (counted from 0), waiting for it until `timeout`.
    static func export(
        _ signal: String, _ index: Int, from collector: FakePushwooshServer, timeout: Duration = .seconds(20)
    ) async throws -> RecordedRequest {
        let deadline = ContinuousClock.now + timeout
        var count = collector.requests.count
        while true {
            let matching = collector.requests.filter { $0.apiMethod == signal }
            if matching.count > index { return matching[index] }
            count += 1
            _ = try await collector.waitForRequests(count: count, timeout: max(.zero, deadline - ContinuousClock.now))
        }
    }

    /// The evaluation records' counts by flag key and reason, over logs requests from `first`, until `key`'s
    /// count reaches `count`.
    static func records(
        until key: String, count: Int, from collector: FakePushwooshServer, first: Int = 0
    ) async throws -> (records: [[String: String]], next: Int) {
        var records: [[String: String]] = []
        var index = first
        func counted() -> Int {
            records.filter { $0["feature_flag.key"] == key }
                .reduce(0) { $0 + (Int($1["pwflagsd.evaluation.count"] ?? "") ?? 0) }
        }
        while counted() < count {
            let request = try await export("logs", index, from: collector)
            index += 1
            let decoded = try OTLPDecoder.decode(request.body, signal: "logs")
            #expect(decoded.exact, "the logs body has fields the OTLP definitions do not")
            for record in OTLPDecoder.records(decoded) {
                #expect(record["event_name"]?.stringValue == "feature_flag.evaluation")
                records.append(OTLPDecoder.attributes(record["attributes"]))
            }
        }
        return (records, index)
    }

    @Test("One export of each signal decodes with the OTLP definitions, with the convention's names")
    func exportDecodes() async throws {
        let collector = try Self.collector()
        defer { collector.stop() }
        let secret = "Bearer s3cret-collector-key"
        let daemon = try DaemonProcess.serving(
            Fixtures.all,
            environment: Self.environment(
                collector,
                extra: [
                    "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20s3cret-collector-key",
                    "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=kiosk-test",
                ]))
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        for _ in 0..<3 { _ = try session.get("new_checkout") }
        _ = try session.result("isEnabled", ["key": "search_v2", "default": false])
        _ = try session.get("holiday_banner")
        _ = try session.get("nope")

        let (records, _) = try await Self.records(until: "new_checkout", count: 3, from: collector)
        let checkout = try #require(records.first { $0["feature_flag.key"] == "new_checkout" })
        #expect(checkout["feature_flag.result.variant"] == Fixtures.checkout.ruleId)
        #expect(checkout["feature_flag.result.reason"] == "targeting_match")
        #expect(checkout["feature_flag.provider.name"] == "pwflagsd")
        #expect(checkout["feature_flag.version"] != nil)
        #expect(checkout["feature_flag.result.value"] == nil, "values go out only when the operator asks")
        #expect(checkout["feature_flag.context.id"] == nil, "the user goes out only when the operator asks")
        let (all, _) = try await Self.records(until: "nope", count: 1, from: collector)
        let missing = try #require(all.first { $0["feature_flag.key"] == "nope" })
        #expect(missing["feature_flag.result.reason"] == "error")
        #expect(missing["error.type"] == "flag_not_found")
        #expect(missing["feature_flag.result.variant"] == nil)
        #expect(
            all.contains { $0["feature_flag.key"] == "search_v2" && $0["feature_flag.result.reason"] == "default" },
            "\(all)")
        #expect(
            all.contains {
                $0["feature_flag.key"] == "holiday_banner" && $0["feature_flag.result.reason"] == "disabled"
                    && $0["feature_flag.result.variant"] == "killed"
            }, "\(all)")

        let metricsRequest = try await Self.export("metrics", 0, from: collector)
        #expect(metricsRequest.path == "/v1/metrics")
        #expect(metricsRequest.header("content-type") == "application/x-protobuf")
        #expect(metricsRequest.header("authorization") == secret)
        let decoded = try OTLPDecoder.decode(metricsRequest.body, signal: "metrics")
        #expect(decoded.exact, "the metrics body has fields the OTLP definitions do not")
        let resource = OTLPDecoder.resource(decoded)
        #expect(resource["service.name"] == "pwflagsd")
        #expect(resource["service.version"] == PWFlagsVersion.current)
        #expect(resource["deployment.environment.name"] == "kiosk-test")
        let instance = try #require(resource["service.instance.id"])
        #expect(instance.count == 32)
        if let machineID = try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8) {
            #expect(!machineID.contains(instance), "service.instance.id must not be the machine id")
        }
        let metrics = OTLPDecoder.metrics(decoded)
        let requests = try #require(metrics["pwflagsd_requests"]?["sum"])
        #expect(requests["is_monotonic"]?.boolValue == true)
        #expect(requests["aggregation_temporality"]?.stringValue == "AGGREGATION_TEMPORALITY_CUMULATIVE")
        let flags = metrics["pwflagsd_flags"]?["gauge"]?["data_points"]?.arrayValue?.first
        #expect(flags?["as_double"]?.numberValue == Double(Fixtures.all.count))
        #expect(metrics["pwflagsd_change_propagation_seconds"]?["histogram"] != nil)
        #expect(metrics["pwflagsd_flags_stale"] != nil)
        #expect(metrics["pwflagsd_telemetry_evaluations_dropped"] != nil)
        #expect(!daemon.log.contains("s3cret"), "the collector's key reached the log")
        #expect(daemon.log.contains("telemetry-on") || daemon.log.contains("exporting telemetry"))
    }

    @Test("503 with Retry-After is waited out and its records sent again; a refused body is dropped, not resent")
    func retriesAndRefusals() async throws {
        let collector = try Self.collector()
        defer { collector.stop() }
        collector.enqueue(.retryAfter(503, value: "1"), for: "logs")
        collector.enqueue(.status(400, body: "bad"), for: "logs")
        let daemon = try DaemonProcess.serving(Fixtures.all, environment: Self.environment(collector))
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        for _ in 0..<2 { _ = try session.get("new_checkout") }

        let first = try await Self.export("logs", 0, from: collector)
        let firstAt = collector.timedRequests.first { $0.request.body == first.body }?.at
        let second = try await Self.export("logs", 1, from: collector)
        let secondAt = collector.timedRequests.last { $0.request.body == second.body }?.at
        if let firstAt, let secondAt {
            #expect(secondAt - firstAt >= .milliseconds(900), "Retry-After: 1 was not waited out")
        }
        let resent = OTLPDecoder.records(try OTLPDecoder.decode(second.body, signal: "logs"))
            .map { OTLPDecoder.attributes($0["attributes"]) }
        #expect(resent.contains { $0["feature_flag.key"] == "new_checkout" && $0["pwflagsd.evaluation.count"] == "2" })

        // The second answer refused that body: the next holds only what was read since.
        _ = try session.get("search_v2")
        let (later, _) = try await Self.records(until: "search_v2", count: 1, from: collector, first: 2)
        #expect(!later.contains { $0["feature_flag.key"] == "new_checkout" }, "a refused body was sent again")

        let text = try #require(try session.result("metrics", ["format": "openmetrics"])?["text"]?.stringValue)
        let families = try PrometheusParser.parse(text, format: "openmetrics")
        let exports = "pwflagsd_telemetry_exports_total"
        #expect(PrometheusParser.value(exports, ["signal": "logs", "outcome": "failed"], in: families) == 1)
        #expect(PrometheusParser.value(exports, ["signal": "logs", "outcome": "refused"], in: families) == 1)
        #expect((PrometheusParser.value(exports, ["signal": "logs", "outcome": "sent"], in: families) ?? 0) >= 1)
        #expect(daemon.log.contains("telemetry-failed"))
        #expect(daemon.log.contains("telemetry-refused"))
    }

    @Test("When the collector is back, one signal's export going through ends the other's backoff at once")
    func collectorReturnEndsBackoff() async throws {
        let collector = try Self.collector()
        defer { collector.stop() }
        // Down for both signals. The metrics' answers carry Retry-After: 1, so that they come back first and soon;
        // the records' backoff doubles from half a second.
        collector.setDefaultReply(.retryAfter(503, value: "1"), for: "metrics")
        collector.setDefaultReply(.status(503, body: "down"), for: "logs")
        let daemon = try DaemonProcess.serving(Fixtures.all, environment: Self.environment(collector))
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        _ = try session.get("new_checkout")

        // The fourth failed export of the records: the backoff after it waits at least 4 seconds.
        _ = try await Self.export("logs", 3, from: collector)
        collector.setDefaultReply(.ok, for: "metrics")
        collector.setDefaultReply(.ok, for: "logs")
        let back = ContinuousClock.now
        let records = try await Self.export("logs", 4, from: collector)

        let logs = collector.timedRequests.filter { $0.request.apiMethod == "logs" }
        let returned = try #require(
            collector.timedRequests.first { $0.request.apiMethod == "metrics" && $0.at > back }?.at)
        #expect(returned <= logs[4].at, "the records went before the metrics were taken again")
        #expect(
            logs[4].at - logs[3].at < .seconds(3),
            "the records waited \(logs[4].at - logs[3].at) after their failure, as if their backoff still held")
        let resent = OTLPDecoder.records(try OTLPDecoder.decode(records.body, signal: "logs"))
            .map { OTLPDecoder.attributes($0["attributes"]) }
        #expect(resent.contains { $0["feature_flag.key"] == "new_checkout" })
        #expect(await Eventually.wait { daemon.log.contains("telemetry-resumed") })
    }

    @Test("A collector that hangs or is gone never delays a read, and is tried again with backoff")
    func slowAndDownCollectors() async throws {
        let collector = try Self.collector()
        collector.setDefaultReply(.hang)
        let daemon = try DaemonProcess.serving(
            Fixtures.all, environment: Self.environment(collector, extra: ["OTEL_EXPORTER_OTLP_TIMEOUT": "300"]))
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        _ = try session.get("new_checkout")
        // Two hung exports of each signal: reads go on meanwhile, each answered at once.
        _ = try await Self.export("metrics", 1, from: collector)
        for _ in 0..<500 { #expect(try session.result("get", ["key": "new_checkout"], timeout: .seconds(1)) != nil) }
        collector.stop()
        for _ in 0..<500 { #expect(try session.result("get", ["key": "search_v2"], timeout: .seconds(1)) != nil) }

        let text = try #require(try session.result("metrics", ["format": "openmetrics"])?["text"]?.stringValue)
        let families = try PrometheusParser.parse(text, format: "openmetrics")
        let failed = PrometheusParser.value(
            "pwflagsd_telemetry_exports_total", ["signal": "metrics", "outcome": "failed"], in: families)
        #expect((failed ?? 0) >= 2)
        #expect(
            PrometheusParser.value(
                "pwflagsd_telemetry_exports_total", ["signal": "metrics", "outcome": "sent"], in: families) == nil)
        // Logged once while the collector stays down, not at every attempt.
        let lines = daemon.log.split(separator: "\n").filter {
            $0.contains("telemetry-failed") && $0.contains("metrics")
        }
        #expect(lines.count <= 2, "\(lines)")
    }

    @Test("A reload turns the export on, and another moves it to a new collector")
    func reloadsTakeEffect() async throws {
        let first = try Self.collector()
        defer { first.stop() }
        let second = try Self.collector()
        defer { second.stop() }
        // No collector named: off until the reload below.
        let daemon = try DaemonProcess.serving(
            Fixtures.all, environment: ["OTEL_BLRP_SCHEDULE_DELAY": "200", "OTEL_METRIC_EXPORT_INTERVAL": "200"])
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        func reload(to collector: FakePushwooshServer) throws {
            var text = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
            if let section = text.range(of: "[Telemetry]") { text.removeSubrange(section.lowerBound...) }
            text += "[Telemetry]\nOTLPEndpoint=http://127.0.0.1:\(collector.port)\n"
            try text.write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
            #expect(try session.result("reload", [:]) != nil)
        }

        // The reload applies at the exporter's next round: its first export says it did, and reads count from then.
        try reload(to: first)
        _ = try await Self.export("metrics", 0, from: first)
        _ = try session.get("new_checkout")
        _ = try await Self.records(until: "new_checkout", count: 1, from: first)

        try reload(to: second)
        let before = first.requests.count
        _ = try await Self.export("metrics", 0, from: second)
        // Only the round under way when the reload came may still have gone to the first collector.
        #expect(first.requests.count <= before + 2, "the exports stayed with the first collector")
        _ = try session.get("search_v2")
        _ = try await Self.records(until: "search_v2", count: 1, from: second)
    }

    @Test("Records are bounded per interval (MaxEvaluationRecords), the rest counted as dropped")
    func recordsAreBounded() async throws {
        let collector = try Self.collector()
        defer { collector.stop() }
        let daemon = try DaemonProcess.serving(
            Fixtures.all,
            extra: "[Telemetry]\nOTLPEndpoint=http://127.0.0.1:\(collector.port)/\nMaxEvaluationRecords=5\n",
            environment: ["OTEL_BLRP_SCHEDULE_DELAY": "3000", "OTEL_METRIC_EXPORT_INTERVAL": "3000"])
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        for index in 0..<20 { _ = try session.get("missing_\(index)") }
        _ = try session.get(String(repeating: "k", count: 300))
        let request = try await Self.export("logs", 0, from: collector)
        let records = OTLPDecoder.records(try OTLPDecoder.decode(request.body, signal: "logs"))
        #expect(records.count == 5)
        let text = try #require(try session.result("metrics", ["format": "openmetrics"])?["text"]?.stringValue)
        let families = try PrometheusParser.parse(text, format: "openmetrics")
        #expect(PrometheusParser.value("pwflagsd_telemetry_evaluations_dropped_total", in: families) == 16)
    }

    @Test("ExportUserId=hashed sends the user id's SHA-256 only; ExportFlagValues=yes sends the value")
    func optIns() async throws {
        let collector = try Self.collector()
        defer { collector.stop() }
        let daemon = try DaemonProcess.serving(
            Fixtures.all,
            extra: """
                [Pushwoosh]
                UserID=kiosk-7
                [Telemetry]
                OTLPEndpoint=http://127.0.0.1:\(collector.port)
                ExportUserId=hashed
                ExportFlagValues=yes

                """,
            environment: ["OTEL_BLRP_SCHEDULE_DELAY": "200", "OTEL_METRIC_EXPORT_INTERVAL": "200"])
        defer { daemon.cleanUp() }
        let session = try SocketSession(socketPath: daemon.socketPath)
        _ = try session.get("new_checkout")
        let (records, _) = try await Self.records(until: "new_checkout", count: 1, from: collector)
        let record = try #require(records.first { $0["feature_flag.key"] == "new_checkout" })
        let expected = try Command.run(
            "/usr/bin/python3", ["-c", "import hashlib; print(hashlib.sha256(b':kiosk-7').hexdigest())"]
        ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(record["feature_flag.context.id"] == expected)
        #expect(record["feature_flag.result.value"] == "true")
        for request in collector.requests {
            #expect(!String(decoding: request.body, as: UTF8.self).contains("kiosk-7"))
        }
    }

    @Test("Varlink's Get and OFREP's single evaluations are counted as the socket's reads are")
    func everySurfaceCounts() async throws {
        let collector = try Self.collector()
        defer { collector.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let varlinkPath = directory.file("varlink.sock")
        let rig = try OFREPRig(
            extra: "[Varlink]\nSocketPath=\(varlinkPath)\n", environment: Self.environment(collector))
        defer { rig.daemon.cleanUp() }
        let varlink = try VarlinkClient(socketPath: varlinkPath)
        for _ in 0..<2 { _ = try varlink.call("io.github.pwflagsd.Flags.Get", ["key": "banner"]) }
        #expect(try rig.post(OFREPRig.single("new_checkout.button_color"))?.status == 200)
        #expect(try rig.post(OFREPRig.single("old_search"))?.status == 200)
        #expect(try rig.post(OFREPRig.bulk)?.status == 200)
        let (records, _) = try await Self.records(until: "old_search", count: 1, from: collector)
        let (all, _) = try await Self.records(until: "banner", count: 2, from: collector)
        #expect(all.contains { $0["feature_flag.key"] == "banner" && $0["pwflagsd.evaluation.count"] == "2" })
        let property = try #require(records.first { $0["feature_flag.key"] == "new_checkout.button_color" })
        #expect(property["feature_flag.result.variant"] == OFREPRig.checkout.ruleId)
        let killed = try #require(records.first { $0["feature_flag.key"] == "old_search" })
        #expect(killed["feature_flag.result.reason"] == "disabled")
        #expect(!all.contains { $0["feature_flag.key"] == "new_checkout" }, "the bulk answer is no single evaluation")

        // Readers and listeners per surface: this session listening, the Varlink client reading.
        let session = try SocketSession(socketPath: rig.daemon.socketPath)
        _ = try session.result("listen", [:])
        let text = try #require(try session.result("metrics", ["format": "openmetrics"])?["text"]?.stringValue)
        let families = try PrometheusParser.parse(text, format: "openmetrics")
        func gauge(_ name: String, _ surface: String) -> Double? {
            PrometheusParser.value(name, ["surface": surface], in: families)
        }
        #expect(gauge("pwflagsd_surface_connections", "line") == 1)
        #expect(gauge("pwflagsd_surface_listens", "line") == 1)
        #expect(gauge("pwflagsd_surface_connections", "varlink") == 1)
        #expect(gauge("pwflagsd_surface_listens", "varlink") == 0)
        #expect(gauge("pwflagsd_surface_listens", "ofrep") == 0)
    }
}
