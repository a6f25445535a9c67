import FlagsCore
import FlagsProtocol

/// `pwflags explain KEY`: one screen on why a flag reads as it does, or why it reads as nothing.
extension Commands {
    func explain() throws(CommandError) -> ExitCode {
        let key = try arguments([], ["key"])[0]
        let result = try request(.explain(key: key), as: ExplainResult.self)
        if invocation.json {
            Output.line(result.jsonValue.serialized(), exact: true)
        } else {
            for line in Self.explanation(result) { Output.line(line) }
        }
        return result.flag == nil ? .failure : .success
    }

    /// The lines a person reads: the value and where it comes from first, then the flag set's state.
    static func explanation(_ result: ExplainResult) -> [String] {
        var lines: [String] = []
        func row(_ label: String, _ text: String) { lines.append("  " + (label + ":").padding(14) + text) }
        if let flag = result.flag {
            lines.append("\(result.key): \(flag.isEnabled ? "enabled" : "disabled")")
            if !flag.properties.isEmpty { row("properties", JSONValue.object(flag.properties).serialized()) }
            row("source", sourceName(result.source))
            row("rule", ruleText(result.rule, ruleId: flag.ruleId))
            if flag.isOverridden { row("source says", sourceValueText(flag.sourceValue)) }
        } else {
            lines.append("\(result.key): no flag (callers get their default)")
            row("why", absenceText(result))
        }
        if let changed = result.changedAtRevision {
            row("changed", "at revision \(changed) (the flag set is at revision \(result.revision))")
        } else {
            row("changed", "not since the daemon started (the flag set is at revision \(result.revision))")
        }
        row("listeners", result.subscriptions == 1 ? "1 subscription" : "\(result.subscriptions) subscriptions")
        if let fetchedAt = result.fetchedAt {
            let age = result.ageSeconds.map { " (\(ageText($0)) ago)" } ?? ""
            row("fetched", fetchedAt + age)
        } else {
            row("fetched", "never")
        }
        row("expires", result.expiresAt ?? "never")
        var state: [String] = []
        if result.stale { state.append("stale: refreshes fail, older than RefreshInterval") }
        if result.partial { state.append("partial: Pushwoosh could not determine every segment (R13)") }
        row("state", state.isEmpty ? "fresh" : state.joined(separator: "; "))
        if let error = result.lastError {
            let why = [error.kind, error.reason].compactMap { $0 }.joined(separator: ": ")
            row("last error", "status \(error.status)\(why.isEmpty ? "" : " (\(why))") at \(error.at)")
        } else {
            row("last error", "none")
        }
        row("next refresh", result.nextRefreshAt ?? "none scheduled")
        if let heldUntil = result.heldUntil { row("held until", "\(heldUntil) (Pushwoosh's Retry-After)") }
        if let problem = result.problem { row("problem", problem) }
        return lines
    }

    private static func sourceName(_ source: String?) -> String {
        switch source {
        case "pushwoosh": "Pushwoosh"
        case "file": "the local flags file (LocalFlagsFile)"
        case "seed": "the device image's seed (SeedFile), until the first fetch"
        case "override": "a local override (pwflags override)"
        default: source ?? "-"
        }
    }

    /// What the source itself holds for an overridden flag.
    private static func sourceValueText(_ value: FlagValue?) -> String {
        guard let value else { return "no such flag (the override adds it)" }
        let rule =
            value.ruleId.isEmpty
            ? "killed" : value.ruleId == Flag.defaultRuleId ? "default rule" : "rule \(value.ruleId)"
        var text = "\(value.isEnabled ? "enabled" : "disabled") (\(rule))"
        if !value.properties.isEmpty { text += " " + JSONValue.object(value.properties).serialized() }
        return text
    }

    private static func ruleText(_ rule: ExplainResult.Rule?, ruleId: String) -> String {
        switch rule {
        case .matched: "matched rule \(ruleId)"
        case .default: "no rule matched: the default rule"
        case .killed: "killed: disabled with the default properties (R14)"
        case .override: "none: forced by a local override (pwflags override clear puts the source's value back)"
        case nil: "-"
        }
    }

    private static func absenceText(_ result: ExplainResult) -> String {
        switch result.absence {
        case .noFlags: "the daemon has no flags yet (nothing fetched, no usable cache)"
        case .expired: "the flags were older than CacheMaxAge and are no longer served (R15)"
        case .notInResponse: "no such key in the flags served (never created, archived or deleted)"
        case .caseDiffers:
            "keys are case-sensitive: did you mean "
                + result.similarKeys.map { "'\($0)'" }.joined(separator: " or ") + "?"
        case nil: "-"
        }
    }

    private static func ageText(_ seconds: Double) -> String {
        switch seconds {
        case ..<90: "\(Int(seconds)) s"
        case ..<5400: "\(Int(seconds / 60)) min"
        default: "\(Int(seconds / 3600)) h"
        }
    }
}

extension String {
    /// The text padded with spaces to `width` characters, for aligned labels.
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
