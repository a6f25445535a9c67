/// The table of targets: one row per claim, each with what was measured and whether the target holds.
public struct FleetReport: Sendable {
    public struct Row: Sendable {
        public var scenario: String
        /// The part of the run the row looks at.
        public var window: String
        /// Requests per minute: the mean the ratio is taken against, and the busiest minute.
        public var mean: Double
        public var peak: Int
        public var totalRequests: Int
        public var requestsPerDevice: Double
        /// The oldest flags a complete response replaced, with no failure before it (seconds).
        public var oldestServed: Double
        public var target: String
        public var measured: String
        public var holds: Bool?

        public var ratio: Double { mean > 0 ? Double(peak) / mean : 0 }
    }

    public var rows: [Row] = []

    public init() {}

    /// Adds the rows `run` answers.
    public mutating func add(_ run: FleetRun) {
        let interval = run.settings.refreshInterval
        let spread = run.settings.effectiveSpread
        let end = run.days * 86400
        let freshness = interval + spread
        let fleetMean = run.fleetMeanPerMinute
        let fresh = run.maxAgeHealthy <= freshness + 1 && run.busyWakes == 0
        func row(_ window: String, mean: Double, peak: Int, target: String, measured: String, holds: Bool?) -> Row {
            Row(
                scenario: run.scenario.title, window: window, mean: mean, peak: peak, totalRequests: run.totalRequests,
                requestsPerDevice: Double(run.totalRequests) / Double(run.devices), oldestServed: run.maxAgeHealthy,
                target: target, measured: measured, holds: holds.map { $0 && fresh })
        }
        switch run.scenario.name {
        case "power-on-cached":
            let after = run.window(from: interval, to: end)
            let ratioAfter = Double(after.peak) / after.mean
            rows.append(
                row(
                    "after the first RefreshInterval", mean: after.mean, peak: after.peak,
                    target: "busiest minute <= 1.25x the mean", measured: "\(Self.fixed(ratioAfter, 2))x",
                    holds: ratioAfter <= 1.25))
            let first = run.window(from: 0, to: interval)
            let ratioFirst = Double(first.peak) / fleetMean
            rows.append(
                row(
                    "within the first RefreshInterval", mean: fleetMean, peak: first.peak,
                    target: "busiest minute <= 6x the mean", measured: "\(Self.fixed(ratioFirst, 2))x",
                    holds: ratioFirst <= 6))
        case "power-on-new":
            let whole = run.window(from: 0, to: end)
            rows.append(
                row(
                    "whole run", mean: fleetMean, peak: whole.peak,
                    target: "reported: each device fetches once at once",
                    measured: "\(Self.fixed(Double(whole.peak) / fleetMean, 1))x in the first minute", holds: nil))
        case "outage":
            let back = run.scenario.outage?.upperBound ?? 0
            let recovery = run.window(from: back, to: back + freshness)
            let ratio = Double(recovery.peak) / fleetMean
            rows.append(
                row(
                    "recovery (2 h after it ends)", mean: fleetMean, peak: recovery.peak,
                    target: "recovery <= 3x the mean; <= 10 requests from any device in the outage",
                    measured:
                        "\(Self.fixed(ratio, 2))x; \(Self.fixed(run.outageRequestsMean, 1)) per device "
                        + "(at most \(run.outageRequestsMax))",
                    holds: ratio <= 3 && run.outageRequestsMax <= 10))
        case "capacity":
            let capacity = run.capacityPerMinute ?? 0
            let late = run.window(from: 2 * interval, to: end)
            let settled = late.peak <= capacity
            let gapOK = run.maxGapWithoutSuccess <= run.settings.cacheMaxAge
            rows.append(
                row(
                    "from the second RefreshInterval on", mean: fleetMean, peak: late.peak,
                    target: "at or under capacity (\(capacity)/min) within 2 intervals; no device without a "
                        + "fetch for longer than CacheMaxAge",
                    measured:
                        "busiest \(late.peak)/min; longest without a fetch \(Self.duration(run.maxGapWithoutSuccess))",
                    holds: settled && gapOK))
        default:
            let whole = run.window(from: 0, to: end)
            let ratio = Double(whole.peak) / whole.mean
            rows.append(
                row(
                    "whole run", mean: whole.mean, peak: whole.peak, target: "busiest minute <= 1.25x the mean",
                    measured: "\(Self.fixed(ratio, 2))x", holds: ratio <= 1.25))
        }
    }

    /// True when every row with a target meets it.
    public var allHold: Bool { rows.allSatisfy { $0.holds ?? true } }

    /// The table in Markdown, as docs/fleet.md shows it.
    public var markdown: String {
        var lines = [
            "| scenario | part | mean/min | busiest/min | busiest/mean | requests | per device | oldest flags | target "
                + "| measured | holds |",
            "|---|---|---:|---:|---:|---:|---:|---:|---|---|---|",
        ]
        for row in rows {
            let holds = row.holds.map { $0 ? "yes" : "**no**" } ?? "-"
            lines.append(
                "| \(row.scenario) | \(row.window) | \(Self.fixed(row.mean, 0)) | \(row.peak) | "
                    + "\(Self.fixed(row.ratio, 2)) | \(row.totalRequests) | \(Self.fixed(row.requestsPerDevice, 1)) | "
                    + "\(Self.duration(row.oldestServed)) | \(row.target) | \(row.measured) | \(holds) |")
        }
        return lines.joined(separator: "\n")
    }

    /// `value` with `digits` decimals, without a formatter.
    public static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return String(value) }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int((abs(value) * scale).rounded())
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard digits > 0 else { return sign + String(scaled) }
        let whole = scaled / Int(scale)
        var fraction = String(scaled % Int(scale))
        while fraction.count < digits { fraction = "0" + fraction }
        return "\(sign)\(whole).\(fraction)"
    }

    /// Seconds as `1h 59min` or `42s`.
    public static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        if total < 60 { return "\(total)s" }
        let hours = total / 3600
        let minutes = (total % 3600) / 60
        return hours > 0 ? "\(hours)h \(minutes)min" : "\(minutes)min \(total % 60)s"
    }
}
