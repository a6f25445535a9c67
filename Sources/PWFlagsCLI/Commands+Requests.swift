import FeatureFlags
import FlagsProtocol
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// What every command shares: the connection (waiting `--wait` for the daemon), one request, argument parsing.
extension Commands {
    func connect() throws(CommandError) -> DaemonConnection {
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

    func request<Answer: CallResult>(_ call: Call, as type: Answer.Type) throws(CommandError) -> Answer {
        let connection = try connect()
        return try Self.rethrowing { () throws(ClientError) in try connection.call(call, as: type) }
    }

    func parse(_ options: Set<String>) throws(CommandError) -> CommandArguments {
        do {
            return try CommandArguments(
                invocation.arguments, allowedOptions: options, command: invocation.command ?? "")
        } catch {
            throw .usage(error.message)
        }
    }

    func expect(_ parsed: CommandArguments, _ names: [String]) throws(CommandError) -> [String] {
        do {
            return try parsed.expect(names, command: invocation.command ?? "")
        } catch {
            throw .usage(error.message)
        }
    }

    func arguments(_ options: Set<String>, _ names: [String]) throws(CommandError) -> [String] {
        try expect(try parse(options), names)
    }

    static func rethrowing<T>(_ body: () throws(ClientError) -> T) throws(CommandError) -> T {
        do {
            return try body()
        } catch {
            throw .client(error)
        }
    }

    static func now() -> Double { MonotonicClock.seconds() }
}
