/// The exposition formats `metrics` writes.
public enum MetricsFormat: String, Sendable, Equatable, CaseIterable {
    /// OpenMetrics 1.0 text (`application/openmetrics-text; version=1.0.0`), ended by `# EOF`.
    case openMetrics = "openmetrics"
    /// The Prometheus text format 0.0.4 (`text/plain; version=0.0.4`), which node_exporter's textfile
    /// collector reads: counters named with their `_total`, no `# EOF`.
    case prometheus
}
