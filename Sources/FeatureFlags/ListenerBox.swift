import Dispatch

/// A listener held weakly, with the queue its calls go to.
final class ListenerBox: Sendable {
    weak let listener: (any FeatureFlagsUpdateListener)?
    let identity: ObjectIdentifier
    let queue: DispatchQueue

    init(_ listener: any FeatureFlagsUpdateListener, queue: DispatchQueue) {
        self.listener = listener
        self.identity = ObjectIdentifier(listener)
        self.queue = queue
    }

    /// Calls the listener on its queue, unless it was released by then.
    func notify() {
        // The weak reference is read on the queue, not now: a listener released in between is not called.
        queue.async { [self] in
            listener?.featureFlagsDidUpdate()
        }
    }
}
