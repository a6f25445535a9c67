import FeatureFlags
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

signal(SIGPIPE, SIG_IGN)

let status: ExitCode
do {
    let invocation = try Invocation(Array(CommandLine.arguments.dropFirst()))
    if invocation.help || invocation.command == nil || invocation.command == "help" {
        // `pwflags help COMMAND` names the command after "help", as `--help COMMAND` does before it.
        let topic = invocation.command == "help" ? invocation.arguments.first : invocation.command
        let text = topic.flatMap(Help.text(for:)) ?? Help.general
        Output.line(text)
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
    // The client library's error says it all (with a refresh's status, a reload's problems): never re-spelled.
    for line in error.message.split(separator: "\n", omittingEmptySubsequences: false) { Output.error(String(line)) }
    status = error.exitCode
} catch {
    Output.error("\(error)")
    status = .failure
}
exit(status.rawValue)
