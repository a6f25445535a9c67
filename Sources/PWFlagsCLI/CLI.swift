import FeatureFlags
import FlagsCore
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The `pwflags` command line: one call that returns the exit status, so that the `pwflags` executable and the
/// daemon's binary, started under the name `pwflags` (the package's /usr/bin/pwflags is a link to pwflagsd),
/// run the same CLI.
public enum CLI {
    /// Runs the CLI with `arguments` (without the program name) and returns its exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        let status: ExitCode
        do {
            let invocation = try Invocation(arguments)
            if invocation.version {
                Output.line("pwflags \(PWFlagsVersion.current)")
                status = .success
            } else if invocation.help || invocation.command == nil || invocation.command == "help" {
                // `pwflags help COMMAND` names the command after "help", as `--help COMMAND` does before it.
                let topic = invocation.command == "help" ? invocation.arguments.first : invocation.command
                // A help for a command that does not exist is a mistake, as running it is.
                if let topic, topic != "help", Help.text(for: topic) == nil { throw Help.unknownCommand(topic) }
                Output.line(topic.flatMap(Help.text(for:)) ?? Help.general, exact: true)
                status = invocation.help || invocation.command == "help" ? .success : .usage
            } else {
                let socketPath = SocketLocation.resolve(
                    explicit: invocation.socket, environment: ProcessInfo.processInfo.environment)
                status = try Commands(invocation: invocation, socketPath: socketPath).run()
            }
        } catch let error as Invocation.UsageError {
            Output.error(error.message)
            status = .usage
        } catch let error as CommandError {
            // The client library's error says it all (with a refresh's status, a reload's problems): never
            // re-spelled.
            for line in error.message.split(separator: "\n", omittingEmptySubsequences: false) {
                Output.error(String(line))
            }
            status = error.exitCode
        } catch {
            Output.error("\(error)")
            status = .failure
        }
        return status.rawValue
    }

    /// True when the program was started under the name `pwflags` (a link to the daemon's binary).
    public static func isInvokedAsCLI(_ programPath: String?) -> Bool {
        guard let programPath else { return false }
        return programPath.split(separator: "/").last == "pwflags"
    }
}
