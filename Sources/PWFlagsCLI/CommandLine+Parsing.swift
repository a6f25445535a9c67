/// The parsed command line: global options, the command and its arguments.
struct Invocation {
    var socket: String?
    var json = false
    var help = false
    var version = false
    /// Seconds to keep retrying the connection before giving up (`--wait`); 0: try once.
    var wait: Double = 0
    var command: String?
    /// Arguments and command options, in order, with the global options taken out.
    var arguments: [String] = []

    /// A command-line mistake: the message and exit status 2.
    struct UsageError: Error {
        var message: String
    }

    /// The options every command takes, before or after it.
    static let globalOptions = ["--socket", "--wait", "--json", "--help", "--version"]

    /// Takes the global options wherever they appear; the rest belongs to the command. Before the command an
    /// unknown option is a mistake (a typo'd `--sockt /x` would otherwise make `/x` the command); after it, the
    /// command's own parsing judges it.
    init(_ arguments: [String]) throws(UsageError) {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            let (name, inlineValue) = Invocation.split(argument)
            switch name {
            case "--socket":
                let path = try Invocation.value(for: name, inline: inlineValue, from: &remaining)
                // An empty path would fall back to $PWFLAGS_SOCKET or the system daemon: a script passing an
                // unset variable must not read another daemon's flags.
                guard !path.isEmpty else { throw UsageError(message: "--socket needs a path, not an empty string") }
                socket = path
            case "--wait":
                let text = try Invocation.value(for: name, inline: inlineValue, from: &remaining)
                guard let seconds = Double(text), seconds >= 0 else {
                    throw UsageError(message: "--wait takes a number of seconds, not '\(text)'")
                }
                wait = seconds
            case "--json":
                json = true
            case "--help", "-h":
                help = true
            case "--version":
                version = true
            case "--":
                // Everything after `--` is an argument, never an option: `pwflags get -- --odd-key`. The marker
                // stays, so that the command's own parsing stops taking options there too.
                if command == nil { command = remaining.popFirst() }
                self.arguments.append("--")
                self.arguments.append(contentsOf: remaining)
                remaining = []
            default:
                if command == nil, argument.hasPrefix("-") {
                    throw UsageError(
                        message: "unknown option \(name)"
                            + Suggestion.hint(for: name, among: Invocation.globalOptions) + "; see pwflags --help")
                } else if command == nil {
                    command = argument
                } else {
                    self.arguments.append(argument)
                }
            }
        }
    }

    /// Splits `--name=value` into its parts.
    static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    static func value(for name: String, inline: String?, from remaining: inout ArraySlice<String>) throws(UsageError)
        -> String
    {
        if let inline { return inline }
        guard let next = remaining.popFirst() else { throw UsageError(message: "\(name) needs a value") }
        return next
    }
}

/// A command's own arguments: positionals and `--option value` pairs.
struct CommandArguments {
    var positionals: [String] = []
    var options: [String: String] = [:]
    /// Every value of each option in order, for an option that may repeat (`options` holds the last).
    var repeated: [String: [String]] = [:]

    /// Reads `arguments`, allowing only `allowedOptions` (each takes a value).
    init(_ arguments: [String], allowedOptions: Set<String>, command: String) throws(Invocation.UsageError) {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--" {
                positionals.append(contentsOf: remaining)
                break
            }
            guard argument.hasPrefix("--") else {
                positionals.append(argument)
                continue
            }
            let (name, inline) = Invocation.split(argument)
            guard allowedOptions.contains(name) else {
                let known = allowedOptions.sorted() + Invocation.globalOptions
                throw Invocation.UsageError(
                    message: "\(command) has no option \(name)" + Suggestion.hint(for: name, among: known))
            }
            let value = try Invocation.value(for: name, inline: inline, from: &remaining)
            options[name] = value
            repeated[name, default: []].append(value)
        }
    }

    /// Exactly `count` positionals, named for the message.
    func expect(_ names: [String], command: String) throws(Invocation.UsageError) -> [String] {
        guard positionals.count == names.count else {
            let expected = names.map { $0.uppercased() }.joined(separator: " ")
            throw Invocation.UsageError(message: "usage: pwflags \(command) \(expected)")
        }
        return positionals
    }
}
