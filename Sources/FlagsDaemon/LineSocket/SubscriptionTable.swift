import FlagsCore
import FlagsProtocol

/// The `listen` subscriptions of every connection: creating and ending them within their limits, and telling
/// them of changes (R9).
///
/// Owned by the loop's thread. Each connection keeps its own subscriptions (they end with it); the table hands
/// out the ids and counts them all (`Listeners`) for `status` and `explain`.
final class SubscriptionTable {
    private var listeners = Listeners()
    private var nextID = 1
    private let metrics: ServerMetrics

    init(metrics: ServerMetrics = ServerMetrics()) {
        self.metrics = metrics
    }

    /// Subscriptions open on every connection, for `status`.
    var count: Int { listeners.count }

    /// The subscriptions that hear of changes of `key`: those to every key and those that chose it.
    func count(forKey key: String) -> Int {
        listeners.count(forKey: FlagKey(key))
    }

    /// Opens a subscription to `keys` (nil: every key) and answers with the listing, or refuses it past
    /// `MaxSubscriptions` or `MaxListenKeys` (`ListenBounds`).
    ///
    /// A `since` that is the snapshot's epoch and revision gets "unchanged" instead of the listing: the client
    /// holds these flags already. Any other `since` (an earlier revision of this epoch, another epoch) gets the
    /// whole listing, since the daemon keeps no history to send only what changed after it.
    func listen(
        _ connection: LineConnection, keys: [String]?, since: StreamPosition? = nil, requestID: RequestID?,
        limits: ServerLimits,
        snapshot: FlagSnapshot, expiresAt: () -> JSONValue
    ) {
        let wanted = keys.map { Set($0.map { FlagKey($0) }) }
        if let refusal = ListenBounds.open(
            wanted, on: connection, listens: connection.subscriptions.count, limits: limits)
        {
            if let requestID {
                metrics.error(refusal)
                Message.writeError(id: requestID, error: refusal, to: &connection.output.bytes)
            }
            return
        }
        let subscription = "s\(nextID)"
        nextID += 1
        connection.subscriptions.append((subscription, wanted))
        listeners.opened(wanted)
        guard let requestID else { return }
        connection.writeListing(
            id: requestID, subscription: (subscription, expiresAt()), keys: wanted, snapshot: snapshot,
            unchanged: since == StreamPosition(epoch: snapshot.epoch, revision: snapshot.revision))
    }

    /// Ends one subscription of `connection`, or answers that it has none by that id.
    func unlisten(_ connection: LineConnection, subscription: String, requestID: RequestID?) {
        guard let index = connection.subscriptions.firstIndex(where: { $0.id == subscription }) else {
            if let id = requestID {
                metrics.error(.unknownSubscription)
                Message.writeError(id: id, error: .unknownSubscription, to: &connection.output.bytes)
            }
            return
        }
        let removed = connection.subscriptions.remove(at: index)
        ListenBounds.close(removed.keys, on: connection)
        listeners.closed(removed.keys)
        if let id = requestID { Message.writeResult(id: id, result: EmptyResult(), to: &connection.output.bytes) }
    }

    /// Forgets the subscriptions of a connection that closed.
    func remove(_ connection: LineConnection) {
        for subscription in connection.subscriptions { listeners.closed(subscription.keys) }
    }

    /// Queues a `flagsChanged` notification on every subscription whose keys `update` touches (R9), in one pass
    /// over the connections (`Listeners.fanOut`), with the update's epoch, revision and expiry; `settle` runs
    /// once for each connection that has subscriptions.
    ///
    /// The part of the notification after the subscription id is encoded once for all the subscriptions of the
    /// same keys (every key, or the same chosen ones) and shared by reference (`ChangeTails`). Returns the
    /// connections it queued a notification on.
    @discardableResult
    func fanOut(
        _ update: FlagUpdate, to connections: [LineConnection], settle: (LineConnection) -> Void
    ) -> [LineConnection] {
        guard listeners.count > 0 else { return [] }
        // The update's own: read anywhere else, it could belong to a later change than this one.
        let expiresAt = update.expiry.json
        let encoded = update.snapshot.encoded
        var tails = ChangeTails(update) { diff in
            FlagsChanged.tail(
                epoch: update.snapshot.epoch,
                revision: update.snapshot.revision,
                changed: diff.changed.map { encoded[FlagKey($0.key)] ?? $0.wireBytes },
                removed: diff.removed,
                expiresAt: expiresAt
            )
        }
        return listeners.fanOut(&tails, to: connections, settle: settle)
    }
}

extension LineConnection: ChangeListener {
    var listenCount: Int { subscriptions.count }

    func listenKeys(at index: Int) -> Set<FlagKey>? { subscriptions[index].keys }

    func queue(_ body: ByteChunk, forListen index: Int) {
        FlagsChanged.writePrefix(subscription: subscriptions[index].id, to: &output.bytes)
        output.append(sharing: body)
    }
}
