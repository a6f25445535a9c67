import Synchronization

/// The flag a reload or the daemon's stop raises to end an exchange, and the wakeup that makes it seen at once.
final class CurlCancellation: Sendable {
    private let flag = Atomic(false)
    private let channel: CurlChannel

    init(channel: CurlChannel) {
        self.channel = channel
    }

    var isCancelled: Bool { flag.load(ordering: .acquiring) }

    func cancel() {
        flag.store(true, ordering: .releasing)
        channel.wake()
    }
}
