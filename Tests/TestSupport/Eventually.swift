#if canImport(Glibc)
    import Glibc
#endif

/// Waiting for an observable effect with a deadline, instead of sleeping a fixed time.
public enum Eventually {
    /// Checks `condition` every few milliseconds until it holds (true) or `timeout` passes (false).
    public static func wait(timeout: Duration = .seconds(10), _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if try condition() { return true }
            guard ContinuousClock.now < deadline else { return false }
            usleep(10_000)
        }
    }
}
