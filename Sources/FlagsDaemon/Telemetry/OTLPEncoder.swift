import FlagsCore

/// Builds the bodies of OTLP/HTTP requests (`application/x-protobuf`): an `ExportMetricsServiceRequest` from the
/// daemon's metric families and an `ExportLogsServiceRequest` of `feature_flag.evaluation` records, under one
/// resource and one instrumentation scope.
///
/// The field numbers are those of opentelemetry-proto 1.x (`collector/metrics/v1`, `collector/logs/v1`); the
/// tests decode every body with the Python package generated from those definitions.
struct OTLPEncoder: Sendable {
    /// An attribute's value: OTLP's `AnyValue`, the kinds the daemon sends.
    enum Value: Sendable, Equatable {
        case string(String)
        case bool(Bool)
        case int(Int64)
    }

    /// A resource's attribute: a name and its text.
    struct Attribute: Sendable, Equatable {
        var name: String
        var value: String
    }

    /// The resource's attributes: `service.name`, `service.version`, `service.instance.id` and the operator's.
    let resource: [Attribute]
    /// When the daemon started counting, for cumulative sums and histograms (`start_time_unix_nano`).
    let startNanos: UInt64

    /// The records' context, beside each record's key.
    struct EvaluationContext: Sendable {
        /// `feature_flag.provider.name`.
        var provider = "pwflagsd"
        /// `feature_flag.set.id`: the application code (empty: the local file).
        var setId: String
        /// `feature_flag.context.id`: the hashed user id, when the operator asked for it.
        var contextId: String?
        /// Whether the records carry `feature_flag.result.value`.
        var includeValues: Bool
    }

    /// The scope every signal is sent under.
    static let scopeName = "pwflagsd"

    /// `ExportMetricsServiceRequest` of `families` at `nowNanos`: counters as cumulative monotonic sums, gauges as
    /// gauges, histograms as cumulative explicit-bucket histograms.
    func metrics(_ families: [MetricFamily], nowNanos: UInt64) -> [UInt8] {
        var request = ProtobufWriter()
        request.message(1) { resourceMetrics in
            resourceMetrics.message(1) { writeResource(&$0) }
            resourceMetrics.message(2) { scopeMetrics in
                scopeMetrics.message(1) { writeScope(&$0) }
                for family in families where !family.samples.isEmpty || family.histogram != nil {
                    scopeMetrics.message(2) { writeMetric(family, nowNanos: nowNanos, to: &$0) }
                }
            }
        }
        return request.bytes
    }

    /// `ExportLogsServiceRequest` of one `feature_flag.evaluation` record per entry of `batch`, with its count
    /// (`pwflagsd.evaluation.count`), in a stable order.
    func logs(_ batch: EvaluationTally.Batch, context: EvaluationContext, nowNanos: UInt64) -> [UInt8] {
        let entries = batch.entries.sorted { ($0.key.flagKey, $0.key.reason) < ($1.key.flagKey, $1.key.reason) }
        var request = ProtobufWriter()
        request.message(1) { resourceLogs in
            resourceLogs.message(1) { writeResource(&$0) }
            resourceLogs.message(2) { scopeLogs in
                scopeLogs.message(1) { writeScope(&$0) }
                for (key, entry) in entries {
                    scopeLogs.message(2) { record in
                        record.fixed64(1, entry.firstSeen)
                        // SEVERITY_NUMBER_INFO: an evaluation is no problem, an error one included.
                        record.uint(2, 9)
                        record.string(3, "INFO")
                        var attributes: [(String, Value)] = [
                            ("feature_flag.key", .string(key.flagKey)),
                            ("feature_flag.provider.name", .string(context.provider)),
                            ("feature_flag.result.reason", .string(key.reason)),
                            ("feature_flag.version", .string(String(key.revision))),
                            ("pwflagsd.evaluation.count", .int(Int64(entry.count))),
                        ]
                        if !context.setId.isEmpty { attributes.append(("feature_flag.set.id", .string(context.setId))) }
                        if let variant = key.variant {
                            attributes.append(("feature_flag.result.variant", .string(variant)))
                        }
                        if context.includeValues, let value = entry.value {
                            attributes.append(("feature_flag.result.value", .bool(value)))
                        }
                        if let contextId = context.contextId {
                            attributes.append(("feature_flag.context.id", .string(contextId)))
                        }
                        if key.variant == nil {
                            attributes.append(("error.type", .string("flag_not_found")))
                            attributes.append(("feature_flag.error.message", .string("no flag has this key")))
                        }
                        for (name, value) in attributes { record.message(6) { writeKeyValue(name, value, to: &$0) } }
                        record.fixed64(11, nowNanos)
                        record.string(12, "feature_flag.evaluation")
                    }
                }
            }
        }
        return request.bytes
    }

    // MARK: Parts

    private func writeResource(_ writer: inout ProtobufWriter) {
        for attribute in resource {
            writer.message(1) { writeKeyValue(attribute.name, .string(attribute.value), to: &$0) }
        }
    }

    private func writeScope(_ writer: inout ProtobufWriter) {
        writer.string(1, Self.scopeName)
        writer.string(2, PWFlagsVersion.current)
    }

    private func writeKeyValue(_ name: String, _ value: Value, to writer: inout ProtobufWriter) {
        writer.string(1, name)
        writer.message(2) { any in
            switch value {
            case .string(let text): any.string(1, text)
            case .bool(let flag): any.bool(2, flag)
            case .int(let number): any.int(3, number)
            }
        }
    }

    private func writeMetric(_ family: MetricFamily, nowNanos: UInt64, to metric: inout ProtobufWriter) {
        metric.string(1, family.name)
        metric.string(2, family.help)
        if family.name.hasSuffix("_seconds") { metric.string(3, "s") }
        switch family.kind {
        case .gauge:
            metric.message(5) { gauge in
                for sample in family.samples { gauge.message(1) { writePoint(sample, nowNanos: nowNanos, to: &$0) } }
            }
        case .counter:
            metric.message(7) { sum in
                for sample in family.samples { sum.message(1) { writePoint(sample, nowNanos: nowNanos, to: &$0) } }
                sum.uint(2, 2)  // AGGREGATION_TEMPORALITY_CUMULATIVE
                sum.bool(3, true)
            }
        case .histogram:
            guard let histogram = family.histogram else { return }
            metric.message(9) { message in
                message.message(1) { point in
                    point.fixed64(2, startNanos)
                    point.fixed64(3, nowNanos)
                    // proto3 leaves a zero count out; so does this, so the body is what protobuf itself writes.
                    if histogram.count > 0 { point.fixed64(4, UInt64(histogram.count)) }
                    point.double(5, histogram.sum)
                    let overflow = histogram.count - histogram.counts.reduce(0, +)
                    point.packedFixed64(6, (histogram.counts + [overflow]).map { UInt64(max(0, $0)) })
                    point.packedDouble(7, histogram.bounds)
                }
                message.uint(2, 2)
            }
        }
    }

    private func writePoint(_ sample: MetricFamily.Sample, nowNanos: UInt64, to point: inout ProtobufWriter) {
        point.fixed64(2, startNanos)
        point.fixed64(3, nowNanos)
        point.double(4, sample.value)
        for (name, value) in sample.labels { point.message(7) { writeKeyValue(name, .string(value), to: &$0) } }
    }
}
