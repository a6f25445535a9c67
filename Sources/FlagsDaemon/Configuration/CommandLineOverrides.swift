/// The configuration keys pwflagsd's command line can override; they win over every file.
///
/// Values are the options' text, unchecked: the loader validates them with the file's rules and reports problems
/// as coming from the command line, next to the files' problems. That is why `logLevel` is a `String` here and
/// not a `LogLevel`: a bad `--log-level` must reach the loader to be reported there.
public struct CommandLineOverrides: Sendable, Equatable {
    /// `--socket PATH`, for `SocketPath=`.
    var socketPath: String?
    /// `--state-dir PATH`, for `StateDirectory=`.
    var stateDirectory: String?
    /// `--log-level LEVEL`, for `LogLevel=`.
    var logLevel: String?
    /// `--bus BUS`, for `[DBus] Bus=` (the user units pass `session`).
    var bus: String?
    /// `--bus-name NAME`, for `[DBus] Name=` (each `pwflagsd@` instance passes a name of its own).
    var busName: String?

    init(
        socketPath: String? = nil, stateDirectory: String? = nil, logLevel: String? = nil, bus: String? = nil,
        busName: String? = nil
    ) {
        self.socketPath = socketPath
        self.stateDirectory = stateDirectory
        self.logLevel = logLevel
        self.bus = bus
        self.busName = busName
    }
}
