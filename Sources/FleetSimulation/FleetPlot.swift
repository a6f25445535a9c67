/// An SVG plot of one run's requests per minute, written as text: the fleet's mean, the target line and, where
/// there is one, Pushwoosh's capacity.
public enum FleetPlot {
    public static func svg(_ run: FleetRun) -> String {
        let width = 900.0
        let height = 300.0
        let left = 70.0
        let right = 20.0
        let top = 30.0
        let bottom = 40.0
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let mean = run.fleetMeanPerMinute
        let peak = Double(run.perMinute.max() ?? 0)
        // A new fleet's first minute is the whole fleet: the scale stops at 8x the mean and says so.
        let ceiling = niceCeiling(min(max(peak, 1.5 * mean, run.capacityPerMinute.map(Double.init) ?? 0), 8 * mean))
        let minutes = Double(run.perMinute.count)
        func x(_ minute: Double) -> Double { left + plotWidth * minute / max(minutes, 1) }
        func y(_ value: Double) -> Double { top + plotHeight * (1 - min(value, ceiling) / ceiling) }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Int(left))" y="18" font-size="14">\(escape(run.scenario.title)): requests per minute, \
            \(run.devices) devices</text>

            """
        // Axes and grid.
        for step in 0...4 {
            let value = ceiling * Double(step) / 4
            let row = y(value)
            svg += "<line x1=\"\(n(left))\" y1=\"\(n(row))\" x2=\"\(n(width - right))\" y2=\"\(n(row))\" "
            svg += "stroke=\"#ddd\"/>\n"
            svg += "<text x=\"\(n(left - 6))\" y=\"\(n(row + 4))\" text-anchor=\"end\">\(Int(value))</text>\n"
        }
        let hours = Int((minutes / 60).rounded())
        let tick = hours > 48 ? 12 : 6
        for hour in stride(from: 0, through: hours, by: tick) {
            let column = x(Double(hour) * 60)
            svg += "<line x1=\"\(n(column))\" y1=\"\(n(top))\" x2=\"\(n(column))\" y2=\"\(n(top + plotHeight))\" "
            svg += "stroke=\"#eee\"/>\n"
            svg += "<text x=\"\(n(column))\" y=\"\(n(height - bottom + 16))\" text-anchor=\"middle\">\(hour) h</text>\n"
        }
        svg += "<text x=\"\(n(left + plotWidth / 2))\" y=\"\(n(height - 6))\" text-anchor=\"middle\">"
        svg += "simulated time</text>\n"
        // Pushwoosh's outage.
        if let outage = run.scenario.outage {
            let from = x(outage.lowerBound / 60)
            let to = x(outage.upperBound / 60)
            svg += "<rect x=\"\(n(from))\" y=\"\(n(top))\" width=\"\(n(to - from))\" height=\"\(n(plotHeight))\" "
            svg += "fill=\"#fdd\"/>\n"
        }
        // Requests per minute: the highest minute of each pixel column, so no peak hides between points.
        let columns = Int(plotWidth)
        var points: [String] = []
        points.reserveCapacity(columns)
        for column in 0..<columns {
            let first = Int(Double(column) / Double(columns) * minutes)
            let last = max(first + 1, Int(Double(column + 1) / Double(columns) * minutes))
            var highest: Int32 = 0
            for minute in first..<min(last, run.perMinute.count) { highest = max(highest, run.perMinute[minute]) }
            points.append("\(n(left + Double(column)))," + n(y(Double(highest))))
        }
        svg += "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1\" points=\""
        svg += points.joined(separator: " ") + "\"/>\n"
        // Reference lines.
        svg += line(y(mean), "#2ca02c", "mean \(Int(mean.rounded()))/min", left: left, right: width - right)
        if let capacity = run.capacityPerMinute {
            svg += line(y(Double(capacity)), "#d62728", "capacity \(capacity)/min", left: left, right: width - right)
        } else {
            svg += line(y(1.25 * mean), "#ff7f0e", "1.25x mean", left: left, right: width - right)
        }
        if peak > ceiling {
            svg += "<text x=\"\(n(left + 6))\" y=\"\(n(top + 14))\" fill=\"#d62728\">busiest minute "
            svg += "\(Int(peak)) (off the scale)</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    private static func line(_ row: Double, _ color: String, _ label: String, left: Double, right: Double) -> String {
        "<line x1=\"\(n(left))\" y1=\"\(n(row))\" x2=\"\(n(right))\" y2=\"\(n(row))\" stroke=\"\(color)\" "
            + "stroke-dasharray=\"6 4\"/>\n<text x=\"\(n(right - 4))\" y=\"\(n(row - 4))\" text-anchor=\"end\" "
            + "fill=\"\(color)\">\(label)</text>\n"
    }

    /// One decimal, enough for pixels.
    private static func n(_ value: Double) -> String { FleetReport.fixed(value, 1) }

    private static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        var magnitude = 1.0
        while magnitude * 10 <= value { magnitude *= 10 }
        for factor in [1.0, 2, 2.5, 5, 10] where factor * magnitude >= value { return factor * magnitude }
        return 10 * magnitude
    }

    private static func escape(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }
}
