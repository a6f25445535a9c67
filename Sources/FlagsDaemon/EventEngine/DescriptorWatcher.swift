import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// One thread and one epoll for the descriptors the daemon waits on outside its listeners: the signal pipe, the
/// wall-clock timer, the local flags file's inotify.
///
/// Each was a Dispatch read source on a queue of its own; they are watched here the way the event engines watch
/// sockets, so that every descriptor of the daemon is waited on by an epoll loop of its own making, and the loop
/// sleeps until one of them is readable (no timer of its own). A handler runs on the watcher's thread: it reads
/// what is there and hands it on (an `AsyncStream`), never doing the work itself.
///
/// Cancelling is carried out on the watcher's thread, so that a handler never runs after the watch's `onCancel`
/// (which may close the descriptor) and never on a descriptor closed under it.
final class DescriptorWatcher: Sendable {
    /// A descriptor being watched; `cancel()` stops it and runs its `onCancel` on the watcher's thread.
    final class Watch: Sendable {
        let descriptor: Int32
        fileprivate let onReadable: @Sendable () -> Void
        fileprivate let onCancel: @Sendable () -> Void
        // The watcher's thread runs for the process's life, so this keeps nothing alive that would otherwise end.
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

    private struct State {
        var watches: [Int32: Watch] = [:]
        var cancelled: [Watch] = []
    }

    /// The process's watcher, its thread started at the first use; nil when no epoll, eventfd or thread could be
    /// made (the callers then start without what needed it, or refuse to start).
    static let shared: DescriptorWatcher? = try? DescriptorWatcher(name: "pwflagsd-watch")

    private let epoll: Epoll
    private let doorbell: EventFD
    private let state = Locked(State())

    init(name: String) throws(SystemError) {
        let epoll = try Epoll()
        do {
            let doorbell = try EventFD()
            try epoll.add(doorbell.descriptor, events: .input)
            self.doorbell = doorbell
        } catch {
            epoll.close()
            throw error
        }
        self.epoll = epoll
        let loop = Unmanaged.passRetained(self)
        guard DetachedThread.start(name: name, { loop.takeRetainedValue().run() }) else {
            loop.release()
            throw SystemError("pthread_create", errno: EAGAIN)
        }
    }

    /// Calls `onReadable` on the watcher's thread whenever `descriptor` is readable, until the watch is
    /// cancelled; then calls `onCancel` there. Throws when epoll refuses the descriptor (`onCancel` not called).
    func watch(
        _ descriptor: Int32, onReadable: @escaping @Sendable () -> Void, onCancel: @escaping @Sendable () -> Void = {}
    ) throws(SystemError) -> Watch {
        let watch = Watch(descriptor, watcher: self, onReadable: onReadable, onCancel: onCancel)
        state.withLock { $0.watches[descriptor] = watch }
        do {
            try epoll.add(descriptor, events: .input)
        } catch {
            state.withLock { $0.watches[descriptor] = nil }
            throw error
        }
        return watch
    }

    private func cancel(_ watch: Watch) {
        state.withLock { $0.cancelled.append(watch) }
        doorbell.ring()
    }

    /// The loop: waits without a timeout, runs the handlers of what is readable, carries out cancellations.
    private func run() {
        let events = Epoll.Buffer(capacity: 16)
        while true {
            let count: Int
            do {
                count = try epoll.wait(into: events, timeout: -1)
            } catch {
                // Only a bad epoll descriptor fails here, which cannot happen to one this watcher keeps open.
                continue
            }
            for index in 0..<count {
                let descriptor = events[index].descriptor
                if descriptor == doorbell.descriptor {
                    doorbell.drain()
                    cancelPending()
                } else if let watch = state.withLock({ $0.watches[descriptor] }) {
                    watch.onReadable()
                }
            }
        }
    }

    private func cancelPending() {
        let cancelled = state.withLock { state -> [Watch] in
            let cancelled = state.cancelled.filter { state.watches[$0.descriptor] === $0 }
            for watch in cancelled { state.watches[watch.descriptor] = nil }
            state.cancelled.removeAll()
            return cancelled
        }
        for watch in cancelled {
            epoll.remove(watch.descriptor)
            watch.onCancel()
        }
    }
}
