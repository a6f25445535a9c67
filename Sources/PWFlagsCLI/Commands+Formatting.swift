import FlagsCore

/// How the commands print flags and values, and read booleans from the command line.
extension Commands {
    /// The typed read of R6, shared with the library and the daemon through `Flag`'s methods.
    static func read(_ name: String, as type: String, from flag: Flag) -> JSONValue? {
        switch type {
        case "string": flag.string(forProperty: name, default: nil).map(JSONValue.string)
        case "number": flag.properties[name]?.numberValue.map { .number(flag.number(forProperty: name, default: $0)) }
        case "bool": flag.properties[name]?.boolValue.map { .bool(flag.bool(forProperty: name, default: $0)) }
        case "json":
            flag.jsonObject(forProperty: name).map(JSONValue.object)
                ?? flag.jsonArray(forProperty: name).map(JSONValue.array)
        default: nil
        }
    }

    /// The flag on one line: key, state, origin and its properties as JSON.
    static func describe(_ flag: Flag, compact: Bool = false) -> String {
        guard compact else { return describeLines(flag).joined(separator: "\n") }
        var text = "\(flag.key): \(flag.isEnabled ? "enabled" : "disabled") (\(Self.origin(flag)))"
        if !flag.properties.isEmpty { text += " " + JSONValue.object(flag.properties).serialized() }
        return text
    }

    /// The flag as lines a person reads, each printed on its own, so that a newline in a key or a property name
    /// is shown escaped on a terminal and cannot make a line of its own.
    static func describeLines(_ flag: Flag) -> [String] {
        var lines = ["\(flag.key): \(flag.isEnabled ? "enabled" : "disabled") (\(Self.origin(flag)))"]
        for name in flag.properties.keys.sorted() {
            lines.append("  \(name) = \(flag.properties[name, default: .null].serialized())")
        }
        return lines
    }

    /// The rule that decided the flag, or for an overridden flag what the source itself holds.
    static func origin(_ flag: Flag) -> String {
        guard flag.isOverridden else { return flag.isKilled ? "killed" : "rule \(flag.ruleId)" }
        guard let value = flag.sourceValue else { return "override; not in the source" }
        let rule = value.ruleId.isEmpty ? "killed" : "rule \(value.ruleId)"
        let state = value.isEnabled ? "enabled" : "disabled"
        return "override; \(value.source?.rawValue ?? "the source") says \(state), \(rule)"
    }

    /// A value as a shell script wants it: strings without quotes, everything else as JSON.
    static func plain(_ value: JSONValue) -> String {
        if case .string(let text) = value { return text }
        return value.serialized()
    }

    static func parseBool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "on", "1": true
        case "false", "no", "off", "0": false
        default: nil
        }
    }
}
