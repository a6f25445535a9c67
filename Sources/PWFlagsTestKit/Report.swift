public import FlagsCore
import Foundation

/// The figures of pwflags-bench and pwflags-soak, in the order they were measured: printed as a table and
/// written as JSON.
public final class Report {
    public struct Figure {
        public var section: String
        public var name: String
        public var value: Double
        public var unit: String
        /// The target (a performance target for the benchmark, a bound for the soak), when there is one, and whether it
        /// holds.
        public var target: String?
        public var met: Bool?
    }

    public private(set) var figures: [Figure] = []
    public var machine: [String: String] = [:]
    /// More top-level members of the JSON (pwflags-soak's verdict and errors).
    public var extra: [String: JSONValue] = [:]

    public init() {}

    public func add(
        _ section: String, _ name: String, _ value: Double, _ unit: String, target: String? = nil, met: Bool? = nil
    ) {
        figures.append(Figure(section: section, name: name, value: value, unit: unit, target: target, met: met))
        FileHandle.standardError.write(
            Data("  \(section) / \(name): \(Report.format(value, unit: unit)) \(unit)\n".utf8))
    }

    /// The value for people: a count (no unit) as a whole number, else three significant digits or so.
    public static func format(_ value: Double, unit: String? = nil) -> String {
        if value.isNaN { return "n/a" }
        if unit == "", value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        if abs(value) >= 100 { return String(Int(value.rounded())) }
        if abs(value) >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    /// A Markdown table, as docs/performance.md and docs/reliability.md show it.
    public func table() -> String {
        var lines = ["| section | figure | value | target |", "| --- | --- | --- | --- |"]
        for figure in figures {
            let target = figure.target.map { "\($0) \(figure.met == true ? "met" : "NOT met")" } ?? ""
            lines.append(
                "| \(figure.section) | \(figure.name) | \(Report.format(figure.value, unit: figure.unit)) \(figure.unit) | \(target) |"
            )
        }
        return lines.joined(separator: "\n")
    }

    public func json() -> String {
        let entries: [JSONValue] = figures.map { figure in
            var members: [String: JSONValue] = [
                "section": .string(figure.section), "name": .string(figure.name),
                "value": figure.value.isFinite ? .number(figure.value) : .null, "unit": .string(figure.unit),
            ]
            if let target = figure.target { members["target"] = .string(target) }
            if let met = figure.met { members["met"] = .bool(met) }
            return .object(members)
        }
        var members = extra
        members["machine"] = .object(machine.mapValues(JSONValue.string))
        members["figures"] = .array(entries)
        return JSONValue.object(members).serialized()
    }
}
