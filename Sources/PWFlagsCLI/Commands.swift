import FeatureFlags
import FlagsCore
import FlagsProtocol
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Runs one CLI command against the daemon and returns its exit status.
struct Commands {
    let invocation: Invocation
    let socketPath: String

    func run() throws(CommandError) -> ExitCode {
        guard let command = invocation.command else { throw .usage(Help.general) }
        switch command {
        case "get": return try get()
        case "is-enabled": return try isEnabled()
        case "property": return try property()
        case "list": return try list()
        case "listen": return try listen()
        case "status": return try status()
        case "refresh": return try refresh()
        case "impression": return try impression()
        case "reload": return try reload()
        case "set-user-id": return try setUserId()
        case "app-state": return try appState()
        case "push-registered": return try pushRegistered()
        case "explain": return try explain()
        case "metrics": return try metrics()
        case "override": return try override()
        case "export-seed": return try exportSeed()
        default: throw .usage(Help.unknownCommand(command).message)
        }
    }

    // MARK: Reading flags

    private func get() throws(CommandError) -> ExitCode {
        let key = try arguments([], ["key"])[0]
        let result = try request(.get(key: key), as: GetResult.self)
        let flag = result.flag
        if invocation.json {
            Output.line((result.jsonValue["flag"] ?? .null).serialized(), exact: true)
        } else if let flag {
            for line in Self.describeLines(flag) { Output.line(line) }
        } else {
            Output.error("no flag '\(key)'")
        }
        return flag == nil ? .failure : .success
    }

    private func isEnabled() throws(CommandError) -> ExitCode {
        let parsed = try parse(["--default"])
        let key = try expect(parsed, ["key"])[0]
        let fallback =
            try parsed.options["--default"].map { text throws(CommandError) in
                guard let value = Self.parseBool(text) else {
                    throw .usage("--default takes true or false, not '\(text)'")
                }
                return value
            } ?? false
        let result = try request(.isEnabled(key: key, default: fallback), as: IsEnabledResult.self)
        Output.line(invocation.json ? result.jsonValue.serialized() : String(result.enabled), exact: invocation.json)
        return result.enabled ? .success : .failure
    }

    private func property() throws(CommandError) -> ExitCode {
        let parsed = try parse(["--type", "--default"])
        let positionals = try expect(parsed, ["key", "name"])
        let (key, name) = (positionals[0], positionals[1])
        guard let type = parsed.options["--type"] else { throw .usage("property needs --type string|number|bool|json") }
        let defaultText = parsed.options["--default"]
        let defaultValue: JSONValue?
        switch type {
        case "string":
            defaultValue = defaultText.map(JSONValue.string)
        case "number":
            defaultValue = try defaultText.map { text throws(CommandError) in
                guard let number = Double(text), number.isFinite else {
                    throw .usage("--default '\(text)' is not a number")
                }
                return .number(number)
            }
        case "bool":
            defaultValue = try defaultText.map { text throws(CommandError) in
                guard let value = Self.parseBool(text) else { throw .usage("--default '\(text)' is not true or false") }
                return .bool(value)
            }
        case "json":
            guard defaultText == nil else { throw .usage("json properties have no default (they read as nothing)") }
            defaultValue = nil
        default:
            throw .usage("--type must be string, number, bool or json, not '\(type)'")
        }
        let flag = try request(.get(key: key), as: GetResult.self).flag
        let value = flag.flatMap { Self.read(name, as: type, from: $0) } ?? defaultValue
        if let value {
            Output.line(invocation.json ? value.serialized() : Self.plain(value), exact: invocation.json)
        } else if invocation.json {
            Output.line("null")
        }
        if flag == nil {
            Output.error("no flag '\(key)'")
            return .failure
        }
        return value == nil ? .failure : .success
    }

    private func list() throws(CommandError) -> ExitCode {
        _ = try arguments([], [])
        let listing = try request(.getAll, as: FlagListing.self)
        if invocation.json {
            Output.line(listing.jsonValue.serialized(), exact: true)
        } else if listing.flags.isEmpty {
            Output.line("(no flags)")
        } else {
            for flag in listing.flags {
                for line in Self.describeLines(flag) { Output.line(line) }
            }
        }
        return .success
    }
}
