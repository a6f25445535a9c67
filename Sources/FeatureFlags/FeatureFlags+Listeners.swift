public import Dispatch

/// Being told about changes: SDK-style listeners and an `AsyncStream`.
extension FeatureFlags {
    /// Calls `listener.featureFlagsDidUpdate()` on `queue` after each update that changed a flag (R9).
    ///
    /// The listener is held weakly; adding it again only changes its queue. The main queue needs
    /// `dispatchMain()` or a `RunLoop` to run on Linux.
    public func addUpdateListener(_ listener: any FeatureFlagsUpdateListener, queue: DispatchQueue = .main) {
        store.add(listener, queue: queue)
    }

    /// Stops calling a listener added with `addUpdateListener(_:queue:)`.
    public func removeUpdateListener(_ listener: any FeatureFlagsUpdateListener) {
        store.remove(listener)
    }

    /// The updates from now on, for async code; the stream ends at `stop()`.
    ///
    /// By default the stream keeps the newest 64 updates a slow consumer has not read and drops older ones;
    /// the mirror itself is always current, so a consumer that fell behind loses keys, never values.
    public func updates(
        bufferingPolicy: AsyncStream<FeatureFlagsUpdate>.Continuation.BufferingPolicy = .bufferingNewest(64)
    ) -> AsyncStream<FeatureFlagsUpdate> {
        store.updates(bufferingPolicy: bufferingPolicy)
    }
}
