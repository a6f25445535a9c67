import FeatureFlags
import FlagsCore

/// Waiting for the mirror in tests: on its update stream, with a timeout, never a sleep.
extension FeatureFlags {
    /// Returns true as soon as `condition` holds for the mirror; false after `timeout`.
    func waitUntil(
        timeout: Duration = .seconds(15), _ condition: @escaping @Sendable (FeatureFlags) -> Bool
    ) async -> Bool {
        // The stream first, then the check: an update between the two is not missed.
        let updates = updates(bufferingPolicy: .bufferingNewest(1))
        if condition(self) { return true }
        return await withDeadline(timeout) {
            for await _ in updates where condition(self) { return true }
            return nil
        } ?? false
    }
}
