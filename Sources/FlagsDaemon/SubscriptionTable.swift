import FlagsCore
import FlagsProtocol

/// The `listen` subscriptions of every connection: creating and ending them within their limits, and telling
/// them of changes (R9).
///
/// Owned by the server loop's thread. Each connection keeps its own subscriptions (they end with it); the table
/// hands out the ids and counts them all for `status`.
final class SubscriptionTable {
    /// Subscriptions open on every connection, for `status`.
    private(set) var count = 0
    private var nextID = 1

    /// Opens a subscription to `keys` (nil: every key) and answers with the listing, or refuses it past
    /// `MaxSubscriptions` or `MaxListenKeys` (`ListenKeyCost`).
    ///
    /// A `since` that is the snapshot's epoch and revision gets "unchanged" instead of the listing: the client
    /// holds these flags already. Any other `since` (an earlier revision of this epoch, another epoch) gets the
    /// whole listing, since the daemon keeps no history to send only what changed after it.
    func listen(
        _ connection: Connection, keys: [String]?, since: StreamPosition? = nil, requestID: RequestID?,
        limits: ServerLimits,
        snapshot: FlagSnapshot, expiresAt: () -> JSONValue
    ) {
        guard connection.subscriptions.count < limits.maxSubscriptions else {
            if let requestID {
                Message.writeError(
                    id: requestID, error: .tooManySubscriptions(limit: limits.maxSubscriptions), to: &connection.output)
            }
            return
        }
        let wanted = keys.map { Set($0.map { FlagKey($0) }) }
        let units = ListenKeyCost.units(of: wanted)
        guard connection.listenKeyUnits + units <= limits.maxListenKeys else {
            if let requestID {
                let error = RPCError.tooManyListenKeys(
                    limit: limits.maxListenKeys, held: connection.listenKeyUnits, requested: units)
                Message.writeError(id: requestID, error: error, to: &connection.output)
            }
            return
        }
        let subscription = "s\(nextID)"
        nextID += 1
        connection.subscriptions.append((subscription, wanted))
        connection.listenKeyUnits += units
        count += 1
        guard let requestID else { return }
        connection.writeListing(
            id: requestID, subscription: (subscription, expiresAt()), keys: wanted, snapshot: snapshot,
            unchanged: since == StreamPosition(epoch: snapshot.epoch, revision: snapshot.revision))
    }

    /// Ends one subscription of `connection`, or answers that it has none by that id.
    func unlisten(_ connection: Connection, subscription: String, requestID: RequestID?) {
        guard let index = connection.subscriptions.firstIndex(where: { $0.id == subscription }) else {
            if let id = requestID {
                Message.writeError(id: id, error: .unknownSubscription, to: &connection.output)
            }
            return
        }
        connection.listenKeyUnits -= ListenKeyCost.units(of: connection.subscriptions.remove(at: index).keys)
        count -= 1
        if let id = requestID { Message.writeResult(id: id, result: EmptyResult(), to: &connection.output) }
    }

    /// Forgets the subscriptions of a connection that closed.
    func remove(_ connection: Connection) {
        count -= connection.subscriptions.count
    }

    /// Queues a `flagsChanged` notification on every subscription whose keys `update` touches (R9), in one pass
    /// over the connections; `settle` runs once for each connection that has subscriptions.
    ///
    /// The part of the notification after the subscription id is encoded once for all subscribers of every key
    /// and shared by reference; subscriptions to chosen keys get their own.
    func fanOut(
        _ update: FlagUpdate, to connections: [Connection], expiresAt: () -> JSONValue,
        settle: (Connection) -> Void
    ) {
        guard count > 0 else { return }
        let expiresAt = expiresAt()
        let encoded = update.snapshot.encoded
        let revision = update.snapshot.revision
        func tail(for diff: FlagDiff) -> ByteChunk {
            ByteChunk(
                FlagsChanged.tail(
                    epoch: update.snapshot.epoch,
                    revision: revision,
                    changed: diff.changed.map { encoded[FlagKey($0.key)] ?? $0.wireBytes },
                    removed: diff.removed,
                    expiresAt: expiresAt
                )
            )
        }
        var everyKey: ByteChunk?
        for connection in connections where !connection.subscriptions.isEmpty {
            for subscription in connection.subscriptions {
                let chunk: ByteChunk
                if let keys = subscription.keys {
                    let diff = update.diff.restricted(to: keys)
                    guard !diff.isEmpty else { continue }
                    chunk = tail(for: diff)
                } else {
                    chunk = everyKey ?? tail(for: update.diff)
                    everyKey = chunk
                }
                FlagsChanged.writePrefix(subscription: subscription.id, to: &connection.output)
                if chunk.count < 512 {
                    connection.output.append(contentsOf: UnsafeRawBufferPointer(start: chunk.base, count: chunk.count))
                } else {
                    connection.append(shared: chunk)
                }
            }
            settle(connection)
        }
    }
}
