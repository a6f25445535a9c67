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
        default: throw .usage("unknown command '\(command)'; see pwflags --help")
        }
    }

    // MARK: Commands

    private func get() throws(CommandError) -> ExitCode {
        let key = try arguments([], ["key"])[0]
        let result = try request(.get(key: key), as: GetResult.self)
        let flag = result.flag
        if invocation.json {
            Output.line((result.jsonValue["flag"] ?? .null).serialized())
        } else if let flag {
            Output.line(Self.describe(flag))
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
        Output.line(invocation.json ? result.jsonValue.serialized() : String(result.enabled))
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
            Output.line(invocation.json ? value.serialized() : Self.plain(value))
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
            Output.line(listing.jsonValue.serialized())
        } else if listing.flags.isEmpty {
            Output.line("(no flags)")
        } else {
            for flag in listing.flags { Output.line(Self.describe(flag)) }
        }
        return .success
    }

    private func listen() throws(CommandError) -> ExitCode {
        let keys = try parse([]).positionals
        let connection = try connect()
        let listing = try Self.rethrowing { () throws(ClientError) in
            try connection.call(.listen(keys: keys.isEmpty ? nil : keys), as: FlagListing.self)
        }
        guard listing.subscription != nil else { throw .client(.protocolViolation("listen without subscription")) }
        while true {
            let (method, params) = try Self.rethrowing { () throws(ClientError) in try connection.nextNotification() }
            guard method == FlagsChanged.method, let change = FlagsChanged(params: params) else { continue }
            if invocation.json {
                Output.line(params.serialized())
                continue
            }
            for flag in change.changed {
                Output.line("revision \(change.revision): changed \(Self.describe(flag, compact: true))")
            }
            for key in change.removed { Output.line("revision \(change.revision): removed \(key)") }
        }
    }

    private func status() throws(CommandError) -> ExitCode {
        _ = try arguments([], [])
        let result = try request(.status, as: StatusResult.self).jsonValue
        if invocation.json {
            Output.line(result.serialized())
        } else if let members = result.objectValue {
            let order = [
                "version", "source", "applicationCode", "hwid", "userId", "flags", "revision", "fetchedAt", "stale",
                "partial", "lastError", "nextRefreshAt", "appState", "sessionStartedAt", "connections", "subscriptions",
                "problem",
            ]
            let keys = order.filter { members[$0] != nil } + members.keys.filter { !order.contains($0) }.sorted()
            for key in keys { Output.line("\(key): \(Self.plain(members[key] ?? .null))") }
        }
        return .success
    }

    private func refresh() throws(CommandError) -> ExitCode {
        _ = try arguments([], [])
        let listing = try request(.refresh, as: FlagListing.self)
        if invocation.json {
            Output.line(listing.jsonValue.serialized())
        } else {
            let origin = listing.fromNetwork == true ? "fetched from Pushwoosh" : "stored flags (no request sent)"
            Output.line("\(listing.flags.count) flags, revision \(listing.revision): \(origin)")
        }
        return .success
    }

    private func impression() throws(CommandError) -> ExitCode {
        let key = try arguments([], ["key"])[0]
        let result = try request(.logImpression(key: key), as: LogImpressionResult.self)
        if invocation.json {
            Output.line(result.jsonValue.serialized())
        } else if case .failed(let status) = result {
            Output.line("failed (status \(status))")
        } else {
            Output.line(result.outcome)
        }
        switch result {
        case .failed, .noFlag: return .failure
        case .sent, .duplicate, .logged: return .success
        }
    }

    private func setUserId() throws(CommandError) -> ExitCode {
        let userId = try arguments([], ["user-id"])[0]
        let result = try request(.setUserId(userId), as: SetUserIdResult.self)
        Output.line(invocation.json ? result.jsonValue.serialized() : result.userId)
        return .success
    }

    private func appState() throws(CommandError) -> ExitCode {
        let text = try arguments([], ["state"])[0]
        guard let state = Call.AppState(rawValue: text) else {
            throw .usage("app-state takes foreground or background, not '\(text)'")
        }
        let result = try request(.setAppState(state), as: SetAppStateResult.self)
        let started = result.sessionStarted
        Output.line(
            invocation.json ? result.jsonValue.serialized() : (started ? "a session started" : "no new session"))
        return .success
    }

    private func pushRegistered() throws(CommandError) -> ExitCode {
        _ = try arguments([], [])
        let result = try request(.pushRegistered, as: PushRegisteredResult.self)
        let started = result.refreshStarted
        Output.line(invocation.json ? result.jsonValue.serialized() : (started ? "refresh started" : "no refresh"))
        return .success
    }

    private func reload() throws(CommandError) -> ExitCode {
        _ = try arguments([], [])
        let result = try request(.reload, as: EmptyResult.self)
        Output.line(invocation.json ? result.jsonValue.serialized() : "reloaded")
        return .success
    }

    // MARK: Helpers

    private func connect() throws(CommandError) -> DaemonConnection {
        let deadline = Self.now() + invocation.wait
        while true {
            do {
                return try DaemonConnection(socketPath: socketPath)
            } catch {
                guard Self.now() < deadline else { throw .client(error) }
                usleep(50_000)
            }
        }
    }

    private func request<Answer: CallResult>(_ call: Call, as type: Answer.Type) throws(CommandError) -> Answer {
        let connection = try connect()
        return try Self.rethrowing { () throws(ClientError) in try connection.call(call, as: type) }
    }

    private func parse(_ options: Set<String>) throws(CommandError) -> CommandArguments {
        do {
            return try CommandArguments(
                invocation.arguments, allowedOptions: options, command: invocation.command ?? "")
        } catch {
            throw .usage(error.message)
        }
    }

    private func expect(_ parsed: CommandArguments, _ names: [String]) throws(CommandError) -> [String] {
        do {
            return try parsed.expect(names, command: invocation.command ?? "")
        } catch {
            throw .usage(error.message)
        }
    }

    private func arguments(_ options: Set<String>, _ names: [String]) throws(CommandError) -> [String] {
        try expect(try parse(options), names)
    }

    private static func rethrowing<T>(_ body: () throws(ClientError) -> T) throws(CommandError) -> T {
        do {
            return try body()
        } catch {
            throw .client(error)
        }
    }

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

    static func describe(_ flag: Flag, compact: Bool = false) -> String {
        let state = flag.isEnabled ? "enabled" : "disabled"
        let rule = flag.isKilled ? "killed" : "rule \(flag.ruleId)"
        var text = "\(flag.key): \(state) (\(rule))"
        let names = flag.properties.keys.sorted()
        if compact {
            if !flag.properties.isEmpty { text += " " + JSONValue.object(flag.properties).serialized() }
            return text
        }
        for name in names { text += "\n  \(name) = \(flag.properties[name, default: .null].serialized())" }
        return text
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

    private static func now() -> Double { MonotonicClock.seconds() }
}

/// Why a command did not succeed, mapped to an exit status.
enum CommandError: Error {
    /// The command line is wrong; the message says how.
    case usage(String)
    /// The daemon could not be asked, or refused; printed as the client library describes it.
    case client(ClientError)

    /// The exit status: 2 for usage, 69 when the daemon could not be reached, 1 otherwise.
    var exitCode: ExitCode {
        switch self {
        case .usage: .usage
        case .client(let error):
            error.code == .unreachable || error.code == .disconnected ? .unavailable : .failure
        }
    }

    /// What the CLI prints.
    var message: String {
        switch self {
        case .usage(let message): message
        case .client(let error): error.description
        }
    }
}
