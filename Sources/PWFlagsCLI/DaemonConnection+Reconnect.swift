import FeatureFlags

#if canImport(Glibc)
    import Glibc
#endif

extension DaemonConnection {
    /// Connects again after the daemon went away, waiting between tries from 0.1 s up to 5 s: a restart (an
    /// upgrade, `systemctl restart`) is over in well under a second, a stopped socket is waited for.
    static func reconnecting(to socketPath: String) -> DaemonConnection {
        var delay = 0.1
        while true {
            usleep(useconds_t(delay * 1_000_000))
            if let connection = try? DaemonConnection(socketPath: socketPath) { return connection }
            delay = min(delay * 2, 5)
        }
    }
}
