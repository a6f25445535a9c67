import UnixIO

/// Messages to a handler on the event loop from other threads: a locked list, and the loop's doorbell rung on
/// each post. The loop takes them all at once when it wakes.
final class Mailbox<Mail: Sendable>: Sendable {
    private let messages = Locked<[Mail]>([])
    private let doorbell: Doorbell

    init(doorbell: Doorbell) {
        self.doorbell = doorbell
    }

    /// Hands a message to the loop from any thread.
    func post(_ message: Mail) {
        messages.withLock { $0.append(message) }
        doorbell.ring()
    }

    /// Everything posted since the last take, in the order posted.
    func take() -> [Mail] {
        messages.withLock { messages in
            defer { messages.removeAll(keepingCapacity: true) }
            return messages
        }
    }

    /// What was posted after the loop's last take; the list keeps no capacity, as the loop has ended.
    func takeLast() -> [Mail] {
        messages.withLock { messages in
            defer { messages.removeAll() }
            return messages
        }
    }
}
