import FlagsCore
import Foundation

/// The benchmark's figures, in the order they were measured: printed as a table and written as JSON.
final class Report {
    struct Figure {
        var section: String
        var name: String
        var value: Double
        var unit: String
        /// The target from issue 7, when there is one, and whether it holds.
        var target: String?
        var met: Bool?
    }

    private(set) var figures: [Figure] = []
    var machine: [String: String] = [:]

    func add(
        _ section: String, _ name: String, _ value: Double, _ unit: String, target: String? = nil, met: Bool? = nil
    ) {
        figures.append(Figure(section: section, name: name, value: value, unit: unit, target: target, met: met))
        FileHandle.standardError.write(Data("  \(section) / \(name): \(Report.format(value)) \(unit)\n".utf8))
    }

    static func format(_ value: Double) -> String {
        if value.isNaN { return "n/a" }
        if abs(value) >= 100 { return String(Int(value.rounded())) }
        if abs(value) >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    /// A Markdown table, as the README shows it.
    func table() -> String {
        var lines = ["| section | figure | value | target |", "| --- | --- | --- | --- |"]
        for figure in figures {
            let target = figure.target.map { "\($0) \(figure.met == true ? "met" : "NOT met")" } ?? ""
            lines.append(
                "| \(figure.section) | \(figure.name) | \(Report.format(figure.value)) \(figure.unit) | \(target) |")
        }
        return lines.joined(separator: "\n")
    }

    func json() -> String {
        let entries: [JSONValue] = figures.map { figure in
            var members: [String: JSONValue] = [
                "section": .string(figure.section), "name": .string(figure.name),
                "value": figure.value.isFinite ? .number(figure.value) : .null, "unit": .string(figure.unit),
            ]
            if let target = figure.target { members["target"] = .string(target) }
            if let met = figure.met { members["met"] = .bool(met) }
            return .object(members)
        }
        return JSONValue.object([
            "machine": .object(machine.mapValues(JSONValue.string)), "figures": .array(entries),
        ]).serialized()
    }
}
