import CLinux
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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
    private let pending = Mutex(false)

    init(fd: Int32, name: String, queue: DispatchQueue, onChange: @escaping @Sendable () -> Void) {
        self.name = name
        self.queue = queue
        self.onChange = onChange
        self.source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setCancelHandler { close(fd) }
    }

    func start() {
        let fd = Int32(source.handle)
        source.setEventHandler { [weak self] in self?.readEvents(fd) }
        source.resume()
    }

    func stop() {
        source.cancel()
    }

    private func readEvents(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var touched = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var offset = 0
            // struct inotify_event: wd (4), mask (4), cookie (4), len (4), then len bytes of zero-padded name.
            while offset + 16 <= count {
                let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
                let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                if String(decoding: nameBytes, as: UTF8.self) == name { touched = true }
                offset += 16 + length
            }
        }
        guard touched else { return }
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
