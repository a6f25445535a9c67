import Dispatch
import FlagsCore
import UnixIO

/// The mirror behind a lock, and everyone waiting for it to change: listeners, streams, first-snapshot waiters.
///
/// Shared by `FeatureFlags` (reads), the subscriber thread and the command queue (writes). It never holds
/// `FeatureFlags` itself, so dropping the last reference to a `FeatureFlags` ends its thread.
final class MirrorStore: Sendable {
    private let mirror = Locked(FlagMirror())
    /// The flags `get` reads, published after each update.
    private let reads = ThreadReadCache()
    private let observers = Locked(Observers())

    private struct Observers {
        var listeners: [ListenerBox] = []
        var streams: [Int: AsyncStream<FeatureFlagsUpdate>.Continuation] = [:]
        var snapshotWaiters: [Int: CheckedContinuation<Bool, Never>] = [:]
        /// Waiters cancelled before they were registered.
        var cancelledWaiters: Set<Int> = []
        var hasSnapshot = false
        var finished = false
        var nextID = 0

        mutating func makeID() -> Int {
            nextID += 1
            return nextID
        }
    }

    /// The hot path of `get`: no lock, a thread-local copy and one dictionary lookup.
    func flag(_ key: String) -> FlagBox? {
        reads.flag(FlagKey(key))
    }

    /// A copy of the whole mirror.
    var current: FlagMirror {
        mirror.withLock { $0 }
    }

    /// Changes the mirror, then tells everyone when `get` answers differently: listeners are called only once
    /// the new values are in place.
    ///
    /// The whole update holds the mirror's lock, publishing and telling included: two writers (the subscriber
    /// thread, a refresh on the command queue) then publish in the order they changed the mirror, so `get` never
    /// goes back to an older snapshot and every stream sees the changes in order. Nothing here waits: listeners
    /// are called on their queues, streams buffer, waiters resume later.
    func update(_ body: (inout FlagMirror) -> FlagDiff) {
        mirror.withLock { mirror in
            let diff = body(&mirror)
            if !diff.isEmpty || mirror.hasSnapshot { reads.publish(mirror.flags.entries) }
            tell(diff, hasSnapshot: mirror.hasSnapshot)
        }
    }

    private func tell(_ diff: FlagDiff, hasSnapshot: Bool) {
        let (listeners, streams, waiters) = observers.withLock { observers in
            var waiters: [CheckedContinuation<Bool, Never>] = []
            if hasSnapshot, !observers.hasSnapshot {
                observers.hasSnapshot = true
                waiters = Array(observers.snapshotWaiters.values)
                observers.snapshotWaiters = [:]
            }
            guard !diff.isEmpty else {
                return ([ListenerBox](), [AsyncStream<FeatureFlagsUpdate>.Continuation](), waiters)
            }
            observers.listeners.removeAll { $0.listener == nil }
            return (observers.listeners, Array(observers.streams.values), waiters)
        }
        for waiter in waiters { waiter.resume(returning: true) }
        guard !diff.isEmpty else { return }
        for listener in listeners { listener.notify() }
        let update = FeatureFlagsUpdate(changed: diff.changed.map(FeatureFlag.init), removed: diff.removed)
        for stream in streams { stream.yield(update) }
    }

    // MARK: Listeners

    func add(_ listener: any FeatureFlagsUpdateListener, queue: DispatchQueue) {
        let box = ListenerBox(listener, queue: queue)
        observers.withLock { observers in
            observers.listeners.removeAll { $0.listener == nil || $0.identity == box.identity }
            observers.listeners.append(box)
        }
    }

    func remove(_ listener: any FeatureFlagsUpdateListener) {
        let identity = ObjectIdentifier(listener)
        observers.withLock { observers in
            observers.listeners.removeAll { $0.listener == nil || $0.identity == identity }
        }
    }

    /// A stream of updates that ends when the stream's consumer goes away or `finish()` runs.
    func updates(
        bufferingPolicy: AsyncStream<FeatureFlagsUpdate>.Continuation.BufferingPolicy
    ) -> AsyncStream<FeatureFlagsUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: FeatureFlagsUpdate.self, bufferingPolicy: bufferingPolicy)
        let id = observers.withLock { observers in
            let id = observers.makeID()
            if !observers.finished { observers.streams[id] = continuation }
            return observers.finished ? nil : id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.observers.withLock { $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    // MARK: First snapshot

    /// Returns true once the first snapshot is in; false when the waiting task is cancelled.
    func waitForSnapshot() async -> Bool {
        let id = observers.withLock { $0.makeID() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let outcome: Bool? = observers.withLock { observers in
                    if observers.hasSnapshot { return true }
                    if observers.finished || observers.cancelledWaiters.remove(id) != nil { return false }
                    observers.snapshotWaiters[id] = continuation
                    return nil
                }
                if let outcome { continuation.resume(returning: outcome) }
            }
        } onCancel: {
            let waiter = observers.withLock { observers in
                guard let waiter = observers.snapshotWaiters.removeValue(forKey: id) else {
                    // Not registered yet: tell the registration. Already resumed: nothing to remember.
                    if !observers.hasSnapshot, !observers.finished { observers.cancelledWaiters.insert(id) }
                    return CheckedContinuation<Bool, Never>?.none
                }
                return waiter
            }
            waiter?.resume(returning: false)
        }
    }

    /// Ends every stream and releases every waiter: the `FeatureFlags` stopped.
    func finish() {
        let (streams, waiters) = observers.withLock { observers in
            observers.finished = true
            defer {
                observers.streams = [:]
                observers.snapshotWaiters = [:]
            }
            return (Array(observers.streams.values), Array(observers.snapshotWaiters.values))
        }
        for stream in streams { stream.finish() }
        for waiter in waiters { waiter.resume(returning: false) }
    }
}
