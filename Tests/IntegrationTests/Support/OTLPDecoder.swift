import FlagsCore
import Foundation
import TestSupport

/// OTLP bodies decoded by the Python classes generated from opentelemetry-proto's own definitions, pinned in a
/// venv under `.build/otlp-venv` (made when missing; a machine without PyPI fails the test, never skips it).
///
/// Each body is parsed as the request its path names, turned into JSON with the definitions' field names, and
/// serialized again: `exact` says the bytes came back the same, which holds only when every field the daemon
/// wrote is a field of the definitions, with the wire type they give it.
enum OTLPDecoder {
    struct Decoded {
        /// The request as `MessageToDict` gives it, the definitions' field names kept.
        var message: JSONValue
        /// True when serializing the parsed message gave back the body byte for byte.
        var exact: Bool
    }

    /// Kept in step with `.ci/run`.
    static let packages = ["opentelemetry-proto==1.45.2", "protobuf==7.36.2"]

    static let venv = PythonVenv("otlp-venv", packages: packages, imports: ["opentelemetry.proto"])

    /// Decodes `body`, sent to `v1/<signal>` (`metrics` or `logs`).
    static func decode(_ body: [UInt8], signal: String) throws -> Decoded {
        let python = try venv.prepared()
        let directory = try TemporaryDirectory(prefix: "pwotlp")
        defer { directory.remove() }
        try Data(body).write(to: URL(fileURLWithPath: directory.file("body")))
        let script = """
            import json, sys
            from google.protobuf.json_format import MessageToDict
            from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
            from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
            body = open(sys.argv[1], "rb").read()
            request = {"metrics": ExportMetricsServiceRequest, "logs": ExportLogsServiceRequest}[sys.argv[2]]()
            request.ParseFromString(body)
            exact = request.SerializeToString(deterministic=True) == body
            print(json.dumps({"exact": exact, "message": MessageToDict(request, preserving_proto_field_name=True)}))
            """
        let outcome = try Command.run(python, ["-c", script, directory.file("body"), signal], check: false)
        guard outcome.status == 0 else {
            throw Rejected(description: "opentelemetry-proto cannot decode the \(signal) body: \(outcome.stderr)")
        }
        let json = try JSONValue(parsing: Array(outcome.stdout.utf8))
        return Decoded(message: json["message"] ?? .null, exact: json["exact"]?.boolValue == true)
    }

    struct Rejected: Error, CustomStringConvertible {
        var description: String
    }

    /// `[{"key": k, "value": {"string_value": v}}]` as `[k: v]`, every kind of value as its JSON text.
    static func attributes(_ list: JSONValue?) -> [String: String] {
        var result: [String: String] = [:]
        for pair in list?.arrayValue ?? [] {
            guard let key = pair["key"]?.stringValue, let value = pair["value"]?.objectValue?.first?.value else {
                continue
            }
            result[key] = value.stringValue ?? value.boolValue.map { String($0) } ?? value.description
        }
        return result
    }

    /// The log records of a decoded `ExportLogsServiceRequest`.
    static func records(_ decoded: Decoded) -> [JSONValue] {
        (decoded.message["resource_logs"]?.arrayValue ?? []).flatMap { ($0["scope_logs"]?.arrayValue ?? []) }
            .flatMap { $0["log_records"]?.arrayValue ?? [] }
    }

    /// The metrics of a decoded `ExportMetricsServiceRequest`, by name.
    static func metrics(_ decoded: Decoded) -> [String: JSONValue] {
        let all = (decoded.message["resource_metrics"]?.arrayValue ?? [])
            .flatMap { ($0["scope_metrics"]?.arrayValue ?? []) }.flatMap { $0["metrics"]?.arrayValue ?? [] }
        return Dictionary(all.compactMap { metric in metric["name"]?.stringValue.map { ($0, metric) } }) { $1 }
    }

    /// The resource's attributes of a decoded request of either signal.
    static func resource(_ decoded: Decoded) -> [String: String] {
        let first =
            decoded.message["resource_metrics"]?.arrayValue?.first
            ?? decoded.message["resource_logs"]?
            .arrayValue?.first
        return attributes(first?["resource"]?["attributes"])
    }
}
