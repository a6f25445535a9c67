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

    static var venv: String { Repository.path(".build/metrics-venv") }

    /// Parses `text` as `format` ("openmetrics" or "prometheus") and returns the families as
    /// `[{"name","type","samples":[{"name","labels","value"}]}]`; throws the parser's complaint.
    static func parse(_ text: String, format: String) throws -> [JSONValue] {
        try prepare()
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
            venv + "/bin/python", ["-c", script, directory.file("metrics.txt"), format], check: false)
        guard outcome.status == 0 else {
            throw Rejected(description: "prometheus_client rejected the \(format) text: \(outcome.stderr)")
        }
        return try JSONValue(parsing: Array(outcome.stdout.utf8)).arrayValue ?? []
    }

    /// The venv with the package, made when missing.
    private static func prepare() throws {
        let python = venv + "/bin/python"
        if FileManager.default.isExecutableFile(atPath: python),
            (try? Command.run(python, ["-c", "import prometheus_client"], check: false).status) == 0
        {
            return
        }
        try Command.run("/usr/bin/python3", ["-m", "venv", venv], timeout: .seconds(120))
        try Command.run(venv + "/bin/pip", ["install", "--quiet", package], timeout: .seconds(300))
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
