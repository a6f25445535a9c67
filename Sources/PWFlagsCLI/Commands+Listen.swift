import FeatureFlags

/// `pwflags listen`: a line per change, or with `--exec` a command run per change.
extension Commands {
    func listen() throws(CommandError) -> ExitCode {
        let parsed = try parse(["--exec"])
        let keys = parsed.positionals.isEmpty ? nil : parsed.positionals
        // The first connection honours --wait and exits 69 without a daemon: a unit with a wrong socket fails at
        // once. Once listening, a daemon that goes away is waited for and resumed from (ChangeCommand,
        // ChangePrinter).
        if let command = parsed.options["--exec"] {
            guard !command.isEmpty else { throw .usage("--exec needs a command") }
            var runner = ChangeCommand(command: command, keys: keys, socketPath: socketPath)
            runner.run(from: try connect())
        }
        var printer = ChangePrinter(keys: keys, socketPath: socketPath, json: invocation.json)
        let connection = try connect()
        try Self.rethrowing { () throws(ClientError) in try printer.run(from: connection) }
    }
}
