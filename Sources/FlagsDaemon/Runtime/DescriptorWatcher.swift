import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The descriptors the daemon waits on outside its listeners and the bus: the signal pipe, the wall-clock timer,
/// the local flags file's inotify. They are waited on by the event loop, as every other descriptor is; a
/// handler runs on the loop's thread, reads what is there and hands it on (an `AsyncStream`), never doing the
/// work itself.
///
/// Watches are made and cancelled from any thread. Cancelling is carried out on the loop's thread, so that a
/// handler never runs after the watch's `onCancel` (which may close the descriptor) and never on a descriptor
/// closed under it.
final class DescriptorWatcher: LoopMember, @unchecked Sendable {
    /// A descriptor being watched; `cancel()` stops it and runs its `onCancel` on the loop's thread.
    final class Watch: Sendable {
        let descriptor: Int32
        fileprivate let onReadable: @Sendable () -> Void
        fileprivate let onCancel: @Sendable () -> Void
        // The process's watcher lives as long as the process, so this keeps nothing alive that would otherwise end.
        private let watcher: DescriptorWatcher

        fileprivate init(
            _ descriptor: Int32, watcher: DescriptorWatcher, onReadable: @escaping @Sendable () -> Void,
            onCancel: @escaping @Sendable () -> Void
        ) {
            self.descriptor = descriptor
            self.watcher = watcher
            self.onReadable = onReadable
            self.onCancel = onCancel
        }

        /// Stops the watch; from any thread, more than once is fine.
        func cancel() {
            watcher.cancel(self)
        }
    }

    /// The process's watcher, on the process's loop; nil when the loop could not be made (the callers then
    /// start without what needed it, or refuse to start).
    static let shared: DescriptorWatcher? = EventLoop.shared.map(DescriptorWatcher.init(loop:))

    private let loop: EventLoop
    // Loop thread only.
    private var membership: EventLoop.Membership?
    private var watches: [Int32: Watch] = [:]

    init(loop: EventLoop) {
        self.loop = loop
        loop.perform { [self] in membership = loop.join(self) }
    }

    /// Calls `onReadable` on the loop's thread whenever `descriptor` is readable, until the watch is cancelled;
    /// then calls `onCancel` there. Throws when epoll refuses the descriptor (`onCancel` not called).
    func watch(
        _ descriptor: Int32, onReadable: @escaping @Sendable () -> Void, onCancel: @escaping @Sendable () -> Void = {}
    ) throws(SystemError) -> Watch {
        let watch = Watch(descriptor, watcher: self, onReadable: onReadable, onCancel: onCancel)
        // The owner first: the loop may see the descriptor's first event before it runs what was posted.
        loop.perform { [self] in
            watches[descriptor] = watch
            membership?.own(descriptor)
        }
        do {
            try loop.epoll.add(descriptor, events: .input)
        } catch {
            loop.perform { [self] in
                guard watches[descriptor] === watch else { return }
                watches[descriptor] = nil
                membership?.disown(descriptor)
            }
            throw error
        }
        return watch
    }

    private func cancel(_ watch: Watch) {
        loop.perform { [self] in
            guard watches[watch.descriptor] === watch else { return }
            watches[watch.descriptor] = nil
            membership?.remove(watch.descriptor)
            watch.onCancel()
        }
    }

    func handle(_ events: Epoll.Events, on descriptor: Int32) {
        watches[descriptor]?.onReadable()
    }

    func woke() {}

    func nextDeadline() -> UInt64? { nil }

    func tick(now: UInt64) {}

    func loopFailed(_ error: SystemError) {}
}
