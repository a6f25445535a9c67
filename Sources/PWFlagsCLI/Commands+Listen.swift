import FeatureFlags
import FlagsCore
import FlagsProtocol

/// `pwflags listen`: a line per change, or with `--exec` a command run per change.
extension Commands {
    func listen() throws(CommandError) -> ExitCode {
        let parsed = try parse(["--exec"])
        let keys = parsed.positionals.isEmpty ? nil : parsed.positionals
        if let command = parsed.options["--exec"] {
            guard !command.isEmpty else { throw .usage("--exec needs a command") }
            var runner = ChangeCommand(command: command, keys: keys, socketPath: socketPath)
            // The first connection honours --wait and exits 69 without a daemon: a unit with a wrong socket
            // fails at once. Once listening, a daemon that goes away is waited for (ChangeCommand).
            runner.run(from: try connect())
        }
        let connection = try connect()
        let listing = try Self.rethrowing { () throws(ClientError) in
            try connection.call(.listen(keys: keys), as: FlagListing.self)
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
}
