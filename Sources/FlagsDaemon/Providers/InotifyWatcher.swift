import UnixIO

/// Turns inotify events about one name in a watched directory into settled changes: a stream that yields once
/// for a burst of events, read on the `DescriptorWatcher`'s thread.
final class InotifyWatcher: Sendable {
    /// Events closer together than this are one change. The events watched (close after write, rename into
    /// place) come when the file is complete, so the delay only folds bursts; re-reading identical content
    /// notifies nobody anyway.
    static let settleDelay = Duration.milliseconds(2)

    private let name: String
    private let inotify: InotifyDescriptor
    /// Set from the first event of a burst until the change is taken: later events of the burst fold into it.
    private let pending = Locked(false)

    /// Takes over `inotify`: it is closed when the watch ends.
    init(inotify: InotifyDescriptor, name: String) {
        self.inotify = inotify
        self.name = name
    }

    /// Calls `onChange` once per settled burst, one at a time, until cancelled; closes the descriptor then.
    /// False, with the descriptor closed, when it cannot be watched.
    func run(onChange: @Sendable () async -> Void) async -> Bool {
        let inotify = self.inotify
        let (changes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let watch = try? DescriptorWatcher.shared?.watch(
            inotify.descriptor, onReadable: { [self] in if isNewChange() { continuation.yield() } },
            onCancel: { inotify.close() })
        guard let watch else {
            inotify.close()
            return false
        }
        continuation.onTermination = { _ in watch.cancel() }
        for await _ in changes {
            try? await Task.sleep(for: Self.settleDelay)
            pending.withLock { $0 = false }
            await onChange()
        }
        watch.cancel()
        return true
    }

    /// Reads the events; true for the first about the name since the last change was taken.
    private func isNewChange() -> Bool {
        guard inotify.readEvents().contains(where: { $0.name == name }) else { return false }
        return pending.withLock { pending in
            defer { pending = true }
            return !pending
        }
    }
}
