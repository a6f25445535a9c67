#if canImport(Glibc)
    import Glibc
#endif

/// Waits for a condition that no signal announces (another process's state seen through `status`).
public enum Eventually {
    /// Checks `condition` every few milliseconds until it holds (true) or `timeout` passes (false).
    ///
    /// Not a sleep standing in for a signal: each round asks the daemon again and returns as soon as it agrees.
    public static func wait(
        timeout: Duration = .seconds(10),
        _ condition: () throws -> Bool
    ) rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if try condition() { return true }
            guard ContinuousClock.now < deadline else { return false }
            usleep(5_000)
        }
    }
}
