/// An object told when the flags change: the Swift shape of the SDK's `PWFeatureFlagsUpdateListener`.
///
/// `FeatureFlags` holds listeners weakly: keep a strong reference to yours, or it is released and never
/// called. `featureFlagsDidUpdate()` runs on the queue given to `addUpdateListener(_:queue:)` (the main queue
/// by default), after the mirror shows the new values. `Sendable` because that queue is not the thread that
/// added the listener; a `@MainActor` class or one that guards its state with a lock qualifies.
public protocol FeatureFlagsUpdateListener: AnyObject, Sendable {
    /// Called after an update that changed what `get(_:)` returns for some key (R9).
    func featureFlagsDidUpdate()
}
