import FeatureFlags
import FlagsProtocol
import Foundation

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
    switch error {
    case .usage(let message):
        Output.error(message)
        status = .usage
    case .client(.unreachable(let path, let reason)):
        Output.error("cannot reach pwflagsd at \(path): \(reason)")
        status = .unavailable
    case .client(.disconnected(let path)):
        Output.error("pwflagsd at \(path) closed the connection")
        status = .unavailable
    case .client(.rpc(let rpcError)):
        if let problems = rpcError.data?["problems"]?.arrayValue {
            Output.error(rpcError.message)
            for problem in problems { Output.error("  \(problem.stringValue ?? problem.serialized())") }
        } else if let refreshStatus = rpcError.refreshStatus {
            Output.error("\(rpcError.message) (\(RPCError.errorDomain) status \(refreshStatus))")
        } else {
            Output.error(rpcError.message)
        }
        status = .failure
    case .client(.protocolViolation(let detail)), .protocolViolation(let detail):
        Output.error("unexpected answer from pwflagsd: \(detail)")
        status = .failure
    }
} catch {
    Output.error("\(error)")
    status = .failure
}
exit(status.rawValue)
