import Dispatch
import UnixIO

/// Turns inotify events about one name in a watched directory into settled change callbacks.
// @unchecked: a dispatch source may be resumed and cancelled from any thread; the rest is immutable or locked.
final class InotifyWatcher: @unchecked Sendable {
    /// Events closer together than this are one change. The events watched (close after write, rename into
    /// place) come when the file is complete, so the delay only folds bursts; re-reading identical content
    /// notifies nobody anyway.
    static let settleDelay: DispatchTimeInterval = .milliseconds(2)

    private let source: any DispatchSourceRead
    private let name: String
    private let queue: DispatchQueue
    private let onChange: @Sendable () -> Void
    private let pending = Locked(false)

    private let inotify: InotifyDescriptor

    /// Takes over `inotify`: it is closed when the watcher stops.
    init(inotify: InotifyDescriptor, name: String, queue: DispatchQueue, onChange: @escaping @Sendable () -> Void) {
        self.inotify = inotify
        self.name = name
        self.queue = queue
        self.onChange = onChange
        self.source = DispatchSource.makeReadSource(fileDescriptor: inotify.descriptor, queue: queue)
        source.setCancelHandler { inotify.close() }
    }

    func start() {
        source.setEventHandler { [weak self] in self?.readEvents() }
        source.resume()
    }

    func stop() {
        source.cancel()
    }

    private func readEvents() {
        guard inotify.readEvents().contains(where: { $0.name == name }) else { return }
        let alreadyPending = pending.withLock { pending in
            defer { pending = true }
            return pending
        }
        guard !alreadyPending else { return }
        queue.asyncAfter(deadline: .now() + Self.settleDelay) { [weak self] in
            guard let self else { return }
            self.pending.withLock { $0 = false }
            self.onChange()
        }
    }
}
