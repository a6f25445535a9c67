#if canImport(Glibc)
    import Glibc
#endif

/// Waits for a condition that no signal announces (another process's state seen through `status`).
public enum Eventually {
    /// The pause between two checks.
    static let interval = Duration.milliseconds(5)

    /// Checks `condition` every few milliseconds until it holds (true) or `timeout` passes (false).
    ///
    /// Not a sleep standing in for a signal: each round asks the daemon again and returns as soon as it agrees.
    /// Between rounds the task sleeps (`Task.sleep`), so a waiting test holds no thread of the cooperative pool
    /// and tests can run in parallel. A cancelled task (a test past its time limit) gets false at once.
    public static func wait(
        timeout: Duration = .seconds(10),
        _ condition: () throws -> Bool
    ) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if try condition() { return true }
            guard ContinuousClock.now < deadline, !Task.isCancelled else { return false }
            try? await Task.sleep(for: interval)
        }
    }

    /// The same wait for a synchronous caller (a helper that cannot be async): it blocks its thread between
    /// rounds, so prefer the async `wait` in tests.
    @available(*, noasync, message: "use the async wait: it sleeps without holding a thread of the pool")
    public static func blockingWait(
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
