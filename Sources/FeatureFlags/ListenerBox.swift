import Dispatch

/// A listener held weakly, with the queue its calls go to.
final class ListenerBox: Sendable {
    #if compiler(>=6.2)
        weak let listener: (any FeatureFlagsUpdateListener)?
    #else
        // Before Swift 6.2 a weak reference cannot be a `let`; it is set only in `init`, and loading a weak
        // reference is safe from any thread.
        nonisolated(unsafe) private(set) weak var listener: (any FeatureFlagsUpdateListener)?
    #endif
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
