import FlagsCore
import FlagsProtocol
import FoundationEssentials

/// Writes metric families as OpenMetrics 1.0 text or as the Prometheus text format 0.0.4.
///
/// The two differ where node_exporter's textfile collector (which reads only 0.0.4) would stumble: OpenMetrics
/// names a counter family without its `_total` and ends with `# EOF`; 0.0.4 names the family as its samples and
/// has no end marker. Everything else (labels, histograms, numbers) is written the same.
enum MetricsExposition {
    static func text(_ families: [MetricFamily], format: MetricsFormat) -> String {
        var out = ""
        for family in families {
            let familyName =
                family.kind == .counter && format == .prometheus ? family.name + "_total" : family.name
            out += "# HELP \(familyName) \(escapeHelp(family.help))\n"
            out += "# TYPE \(familyName) \(family.kind.rawValue)\n"
            let sampleName = family.kind == .counter ? family.name + "_total" : family.name
            for sample in family.samples {
                out += "\(sampleName)\(labels(sample.labels)) \(number(sample.value))\n"
            }
            if let histogram = family.histogram {
                let bounds = histogram.bounds.map(number) + ["+Inf"]
                for (bound, count) in zip(bounds, histogram.cumulativeCounts) {
                    out += "\(family.name)_bucket{le=\"\(bound)\"} \(count)\n"
                }
                out += "\(family.name)_sum \(number(histogram.sum))\n"
                out += "\(family.name)_count \(histogram.count)\n"
            }
        }
        if format == .openMetrics { out += "# EOF\n" }
        return out
    }

    /// Integers without a fraction; other values as Swift prints a Double (`0.25`, `1e-05`), which both formats
    /// read.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    private static func labels(_ pairs: [(String, String)]) -> String {
        guard !pairs.isEmpty else { return "" }
        return "{" + pairs.map { "\($0.0)=\"\(escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
    }

    private static func escapeLabel(_ value: String) -> String {
        value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
            .replacing("\n", with: "\\n")
    }

    private static func escapeHelp(_ value: String) -> String {
        value.replacing("\\", with: "\\\\").replacing("\n", with: "\\n")
    }
}
