import FlagsCore

/// Where clients find the daemon: `--socket PATH`, then `$PWFLAGS_SOCKET`, then the default path.
public enum SocketLocation {
    /// The socket path: `explicit` when given and not empty, else `PWFLAGS_SOCKET` from `environment` when set and
    /// not empty, else `/run/pwflagsd/pwflagsd.sock`.
    public static func resolve(explicit: String? = nil, environment: [String: String]) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let fromEnvironment = environment["PWFLAGS_SOCKET"], !fromEnvironment.isEmpty { return fromEnvironment }
        return Configuration.defaultSocketPath
    }
}
