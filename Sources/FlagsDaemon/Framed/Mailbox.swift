import UnixIO

/// What reaches a framed protocol's handler on the event loop from other threads: the flags' changes, which the
/// store puts in its feed, and its mail (answers from the async side, new limits, shutdown). Either rings the
/// loop's doorbell; the handler takes both when it wakes, the changes first, so that a change a call made reaches
/// the listeners before that call's answer.
final class Mailbox<Mail: Sendable>: Sendable {
    private let messages = Locked<[Mail]>([])
    private let doorbell: Doorbell
    /// The flags' changes, in revision order (`ChangeFeed`).
    let changes: ChangeFeed

    /// Observes `store` from now on; `changes.initial` is the snapshot the handler starts from.
    init(doorbell: Doorbell, store: FlagStore) {
        self.doorbell = doorbell
        self.changes = ChangeFeed(store: store, doorbell: doorbell)
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

    /// The loop has ended: later changes are dropped, and what was posted after its last take is returned (the
    /// list keeps no capacity).
    func close() -> [Mail] {
        changes.close()
        return messages.withLock { messages in
            defer { messages.removeAll() }
            return messages
        }
    }
}
