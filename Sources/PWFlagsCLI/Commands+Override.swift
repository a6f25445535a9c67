import FeatureFlags
import FlagsCore
import FlagsProtocol

/// `pwflags override set|clear|list`: force a flag on this device for testing, and put it back.
extension Commands {
    func override() throws(CommandError) -> ExitCode {
        guard let action = invocation.arguments.first, !action.hasPrefix("-") else {
            throw .usage("usage: pwflags override set|clear|list [KEY]; see pwflags override --help")
        }
        let rest = Array(invocation.arguments.dropFirst())
        switch action {
        case "set": return try setOverride(rest)
        case "clear": return try clearOverride(rest)
        case "list": return try listOverrides(rest)
        default: throw .usage("override takes set, clear or list, not '\(action)'")
        }
    }

    private func setOverride(_ arguments: [String]) throws(CommandError) -> ExitCode {
        let parsed = try parse(arguments, ["--enabled", "--property"])
        guard parsed.positionals.count == 1 else {
            throw .usage("usage: pwflags override set KEY [--enabled BOOL] [--property NAME=JSON ...]")
        }
        let enabled = try parsed.options["--enabled"].map { text throws(CommandError) in
            guard let value = Self.parseBool(text) else { throw .usage("--enabled takes true or false, not '\(text)'") }
            return value
        }
        var properties: [String: JSONValue] = [:]
        for assignment in parsed.repeated["--property"] ?? [] {
            let (name, value) = try Self.property(assignment)
            properties[name] = value
        }
        let override = FlagOverride(key: parsed.positionals[0], isEnabled: enabled, properties: properties)
        let result = try request(.setOverride(override), as: GetResult.self)
        guard let flag = result.flag else { throw .client(.protocolViolation("setOverride without a flag")) }
        if invocation.json {
            Output.line((result.jsonValue["flag"] ?? .null).serialized(), exact: true)
        } else {
            for line in Self.describeLines(flag) { Output.line(line) }
        }
        return .success
    }

    private func clearOverride(_ arguments: [String]) throws(CommandError) -> ExitCode {
        let all = arguments.contains("--all")
        let parsed = try parse(arguments.filter { $0 != "--all" }, [])
        let key: String?
        switch (parsed.positionals.count, all) {
        case (1, false): key = parsed.positionals[0]
        case (0, true): key = nil
        default: throw .usage("usage: pwflags override clear KEY, or pwflags override clear --all")
        }
        let result = try request(.clearOverride(key: key), as: ClearOverrideResult.self)
        if invocation.json {
            Output.line(result.jsonValue.serialized(), exact: true)
        } else if result.cleared.isEmpty {
            Output.line(key.map { "no override of '\($0)'" } ?? "no overrides")
        } else {
            for cleared in result.cleared { Output.line("cleared \(cleared)") }
        }
        return .success
    }

    private func listOverrides(_ arguments: [String]) throws(CommandError) -> ExitCode {
        let parsed = try parse(arguments, [])
        guard parsed.positionals.isEmpty else { throw .usage("usage: pwflags override list") }
        let result = try request(.listOverrides, as: OverrideList.self)
        if invocation.json {
            Output.line(result.jsonValue.serialized(), exact: true)
        } else if result.overrides.isEmpty {
            Output.line("(no overrides)")
        } else {
            for override in result.overrides {
                let state = override.isEnabled.map { $0 ? "enabled" : "disabled" } ?? "state from the source"
                Output.line("\(override.key): \(state)")
                for name in override.properties.keys.sorted() {
                    Output.line("  \(name) = \(override.properties[name, default: .null].serialized())")
                }
            }
        }
        return .success
    }

    /// `NAME=JSON` of `--property`: the value is JSON, so a string needs its quotes (`color='"red"'`).
    private static func property(_ assignment: String) throws(CommandError) -> (String, JSONValue) {
        guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
            throw .usage("--property takes NAME=JSON, not '\(assignment)'")
        }
        let name = String(assignment[..<equals])
        let text = String(assignment[assignment.index(after: equals)...])
        guard let value = try? JSONValue(parsing: text) else {
            throw .usage("--property \(name): '\(text)' is not JSON (a string needs quotes: \(name)='\"\(text)\"')")
        }
        return (name, value)
    }

    private func parse(_ arguments: [String], _ options: Set<String>) throws(CommandError) -> CommandArguments {
        do {
            return try CommandArguments(arguments, allowedOptions: options, command: "override")
        } catch {
            throw .usage(error.message)
        }
    }
}
