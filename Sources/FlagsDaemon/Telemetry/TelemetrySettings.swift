import FlagsCore

/// Where and how the daemon exports OpenTelemetry (docs/telemetry.md): the `[Telemetry]` keys, and the standard
/// `OTEL_*` variables as the OpenTelemetry SDKs read them.
///
/// `OTLPEndpoint=` wins over `OTEL_EXPORTER_OTLP_ENDPOINT`; without the key, the per-signal
/// `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` and `_LOGS_ENDPOINT` win over the general one, as the SDKs do. Neither
/// set, or `OTEL_SDK_DISABLED=true`: nothing is exported.
struct TelemetrySettings: Sendable, Equatable {
    /// Where the metrics go, and how often.
    var metrics: Signal
    /// Where the evaluation records go, and how often.
    var logs: Signal
    /// `Name: value` lines from `OTEL_EXPORTER_OTLP_HEADERS`: they may hold a collector's key, so they are never
    /// logged or shown.
    var headers: [String]
    /// The resource's attributes, `service.*` first, then the operator's `OTEL_RESOURCE_ATTRIBUTES`.
    var resource: [Attribute]
    /// The bound on one export, from connect to the last byte.
    var timeout: Duration
    /// `OTEL_EXPORTER_OTLP_CERTIFICATE`: certificate authorities trusted besides the system store.
    var certificateFile: String?
    /// What the evaluation records carry, and how many one interval keeps (the `[Telemetry]` keys).
    var records: Records

    struct Signal: Sendable, Equatable {
        var url: String
        var interval: Duration
    }

    typealias Attribute = OTLPEncoder.Attribute

    /// True when both signals go to one collector (the same scheme, host and port): one signal's export that goes
    /// through after failures then says the other's collector is back too.
    var oneCollector: Bool {
        CollectorAddress.origin(of: metrics.url) == CollectorAddress.origin(of: logs.url)
    }

    /// What the variables and keys resolve to: the settings (nil: telemetry is off) and what was wrong with them.
    struct Resolution: Sendable, Equatable {
        var settings: TelemetrySettings?
        var problems: [String] = []
    }

    /// The export intervals' defaults: a minute for both, so that a fleet's collector gets one request per device
    /// and signal a minute. The OpenTelemetry SDKs batch logs every second (`OTEL_BLRP_SCHEDULE_DELAY`'s default),
    /// which the variable still gives when set.
    static let defaultInterval = Duration.seconds(60)
    /// The shortest interval taken from a variable: below it, a typo (`60` meant as seconds) would make every
    /// device of a fleet send ten requests a second.
    static let minimumInterval = Duration.milliseconds(100)

    /// Resolves the settings; `instanceId` is the device's stable id (`service.instance.id`).
    static func resolve(_ configuration: Configuration, environment: [String: String], instanceId: String)
        -> Resolution
    {
        var problems: [String] = []
        if environment["OTEL_SDK_DISABLED"]?.lowercased() == "true" { return Resolution(settings: nil) }
        let endpoints: (metrics: String, logs: String)
        if let key = configuration.otlpEndpoint, case .success(let address) = CollectorAddress.parse(key) {
            endpoints = (address.url(for: "v1/metrics"), address.url(for: "v1/logs"))
        } else {
            var general: CollectorAddress?
            if let value = nonEmpty(environment["OTEL_EXPORTER_OTLP_ENDPOINT"]) {
                switch CollectorAddress.parse(value) {
                case .success(let address): general = address
                case .failure(let problem): problems.append("OTEL_EXPORTER_OTLP_ENDPOINT: \(problem)")
                }
            }
            func signal(_ variable: String, _ path: String) -> String? {
                guard let value = nonEmpty(environment[variable]) else { return general?.url(for: path) }
                switch CollectorAddress.parse(value) {
                case .success(let address): return address.base
                case .failure(let problem):
                    problems.append("\(variable): \(problem)")
                    return nil
                }
            }
            let metrics = signal("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "v1/metrics")
            let logs = signal("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "v1/logs")
            guard let metrics, let logs else { return Resolution(settings: nil, problems: problems) }
            endpoints = (metrics, logs)
        }
        if let protocolName = nonEmpty(environment["OTEL_EXPORTER_OTLP_PROTOCOL"]), protocolName != "http/protobuf" {
            problems.append("OTEL_EXPORTER_OTLP_PROTOCOL=\(protocolName): the daemon sends http/protobuf only")
        }
        let headers = pairs(
            environment["OTEL_EXPORTER_OTLP_HEADERS"], variable: "OTEL_EXPORTER_OTLP_HEADERS",
            problems: &problems
        ).map { "\($0.name): \($0.value)" }
        let operatorAttributes = pairs(
            environment["OTEL_RESOURCE_ATTRIBUTES"], variable: "OTEL_RESOURCE_ATTRIBUTES", problems: &problems)
        let serviceName =
            nonEmpty(environment["OTEL_SERVICE_NAME"])
            ?? operatorAttributes.last(where: { $0.name == "service.name" })?.value ?? "pwflagsd"
        var resource = [
            Attribute(name: "service.name", value: serviceName),
            Attribute(name: "service.version", value: PWFlagsVersion.current),
        ]
        if !operatorAttributes.contains(where: { $0.name == "service.instance.id" }) {
            resource.append(Attribute(name: "service.instance.id", value: instanceId))
        }
        for attribute in operatorAttributes where attribute.name != "service.name" {
            resource.removeAll { $0.name == attribute.name }
            resource.append(attribute)
        }
        return Resolution(
            settings: TelemetrySettings(
                metrics: Signal(
                    url: endpoints.metrics,
                    interval: milliseconds(environment, "OTEL_METRIC_EXPORT_INTERVAL", problems: &problems)),
                logs: Signal(
                    url: endpoints.logs,
                    interval: milliseconds(environment, "OTEL_BLRP_SCHEDULE_DELAY", problems: &problems)),
                headers: headers, resource: resource,
                timeout: milliseconds(
                    environment, "OTEL_EXPORTER_OTLP_TIMEOUT", default: .seconds(10), problems: &problems),
                certificateFile: nonEmpty(environment["OTEL_EXPORTER_OTLP_CERTIFICATE"]),
                records: Records(
                    userId: configuration.exportUserId, values: configuration.exportFlagValues,
                    limit: configuration.maxEvaluationRecords)),
            problems: problems)
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    /// A duration in milliseconds from `variable`, at least `minimumInterval`; the default when unset or wrong.
    private static func milliseconds(
        _ environment: [String: String], _ variable: String, default fallback: Duration = defaultInterval,
        problems: inout [String]
    ) -> Duration {
        guard let text = nonEmpty(environment[variable]) else { return fallback }
        guard let number = Int(text), number >= 0, number <= 86_400_000 else {
            problems.append("\(variable)=\(text): expected milliseconds, from 100 to 86400000; using the default")
            return fallback
        }
        return max(minimumInterval, .milliseconds(number))
    }

    /// `key=value` pairs separated by commas, percent-decoded (the W3C Baggage form the SDKs read); a pair that is
    /// not one, or that would break a header line, is left out with a problem that never shows its value.
    static func pairs(_ text: String?, variable: String, problems: inout [String]) -> [Attribute] {
        guard let text = nonEmpty(text) else { return [] }
        var result: [Attribute] = []
        for (index, member) in text.split(separator: ",").enumerated() {
            let parts = member.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let name = PercentDecoding.decoded(ConfigurationParser.trimmed(parts[0])),
                let value = PercentDecoding.decoded(ConfigurationParser.trimmed(parts[1])), !name.isEmpty,
                !(name + value).unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
            else {
                problems.append("\(variable): member \(index + 1) is not name=value; left out")
                continue
            }
            result.append(Attribute(name: name, value: value))
        }
        return result
    }
}

extension TelemetrySettings {
    /// The `[Telemetry]` keys of the evaluation records: the user id (`ExportUserId`), the flag's value
    /// (`ExportFlagValues`), and how many one interval keeps (`MaxEvaluationRecords`).
    struct Records: Sendable, Equatable {
        var userId: UserIdExport
        var values: Bool
        var limit: Int
    }
}
