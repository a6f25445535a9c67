import FlagsCore

/// A connection whose listens hear of changes: the line socket's subscriptions, a Varlink `Listen`.
protocol ChangeListener: AnyObject {
    /// How many listens the connection holds.
    var listenCount: Int { get }

    /// The keys of its listen at `index` (nil: every key).
    func listenKeys(at index: Int) -> Set<FlagKey>?

    /// Queues a change's `body`, shared by reference, for its listen at `index`.
    func queue(_ body: ByteChunk, forListen index: Int)
}

/// The listens of one surface: how many there are, and to which keys (for `status` and `explain`, without a walk
/// over the connections), and the one fan-out of a change to them. Owned by the loop's thread.
struct Listeners {
    /// Listens open on the surface.
    private(set) var count = 0
    private var everyKey = 0
    private var byKey: [FlagKey: Int] = [:]

    /// The listens that hear of changes of `key`: those to every key and those that chose it.
    func count(forKey key: FlagKey) -> Int {
        everyKey + (byKey[key] ?? 0)
    }

    /// A listen to `keys` (nil: every key) opened.
    mutating func opened(_ keys: Set<FlagKey>?) { track(keys, 1) }

    /// A listen to `keys` ended.
    mutating func closed(_ keys: Set<FlagKey>?) { track(keys, -1) }

    private mutating func track(_ keys: Set<FlagKey>?, _ delta: Int) {
        count += delta
        guard let keys else {
            everyKey += delta
            return
        }
        for key in keys {
            let next = (byKey[key] ?? 0) + delta
            byKey[key] = next > 0 ? next : nil
        }
    }

    /// Queues a change on every listen whose keys it touches (R9: a change of none of them sends nothing). Each
    /// body comes from `tails`, made once for all the listens of the same keys and shared by reference;
    /// `settle` runs once for each connection that listens. Returns the connections it queued a change on.
    func fanOut<Listener: ChangeListener>(
        _ tails: inout ChangeTails, to connections: some Sequence<Listener>, settle: (Listener) -> Void
    ) -> [Listener] {
        guard count > 0 else { return [] }
        var notified: [Listener] = []
        for connection in connections where connection.listenCount > 0 {
            var queued = false
            for index in 0..<connection.listenCount {
                guard let body = tails.tail(for: connection.listenKeys(at: index)) else { continue }
                connection.queue(body, forListen: index)
                queued = true
            }
            if queued { notified.append(connection) }
            settle(connection)
        }
        return notified
    }
}
