import FlagsCore
import Foundation
import TestSupport

/// The `prometheus-client` package's own parsers, run on metrics text: the OpenMetrics parser and the text format
/// 0.0.4 parser that node_exporter's format follows.
///
/// The package lives in a venv under `.build/metrics-venv`, created (and the package installed from PyPI) when
/// missing. A machine without python3's venv or without PyPI fails the test that asks, never skips it.
enum PrometheusParser {
    /// The parser's complaint.
    struct Rejected: Error, CustomStringConvertible {
        var description: String
    }

    /// The pinned version, so that a new release cannot change what passes.
    static let package = "prometheus-client==0.26.0"

    static let venv = PythonVenv("metrics-venv", packages: [package], imports: ["prometheus_client"])

    /// Parses `text` as `format` ("openmetrics" or "prometheus") and returns the families as
    /// `[{"name","type","samples":[{"name","labels","value"}]}]`; throws the parser's complaint.
    static func parse(_ text: String, format: String) throws -> [JSONValue] {
        let python = try venv.prepared()
        let directory = try TemporaryDirectory(prefix: "pwprom")
        defer { directory.remove() }
        try directory.write("metrics.txt", text)
        let script = """
            import json, sys
            from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics
            from prometheus_client.parser import text_string_to_metric_families as prometheus
            parse = openmetrics if sys.argv[2] == "openmetrics" else prometheus
            text = open(sys.argv[1]).read()
            families = [{"name": f.name, "type": f.type, "samples": [
                {"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]} for f in parse(text)]
            print(json.dumps(families))
            """
        let outcome = try Command.run(
            python, ["-c", script, directory.file("metrics.txt"), format], check: false)
        guard outcome.status == 0 else {
            throw Rejected(description: "prometheus_client rejected the \(format) text: \(outcome.stderr)")
        }
        return try JSONValue(parsing: Array(outcome.stdout.utf8)).arrayValue ?? []
    }

    /// The value of the sample `name` with `labels` among `families`; nil when there is none.
    static func value(_ name: String, _ labels: [String: String] = [:], in families: [JSONValue]) -> Double? {
        for family in families {
            for sample in family["samples"]?.arrayValue ?? [] where sample["name"]?.stringValue == name {
                let sampleLabels = sample["labels"]?.objectValue?.compactMapValues(\.stringValue) ?? [:]
                if sampleLabels == labels { return sample["value"]?.numberValue }
            }
        }
        return nil
    }
}
