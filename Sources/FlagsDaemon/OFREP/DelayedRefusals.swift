import FlagsCore
import OFREP

/// Wrong tokens answered slowly, for all clients together: at most `perSecond` 401s a second after a burst of as
/// many; the others wait their turn without being read further.
///
/// Requests without the right token are not counted against the rate rule (so that guessers cannot drain what
/// clients with the token need), which let one client try 5,250 tokens a second. Now guessing goes at most
/// `perSecond` a second however many connections try, and a client with the token is never slowed: its answer is
/// computed at once, and a waiting guesser holds a slot that any newcomer may take (`makeRoom` closes the oldest
/// connection that has not shown the token, and a guess closed before its 401 has taught nothing).
///
/// Owned by the event loop's thread.
struct DelayedRefusals {
    /// 401 answers a second, all clients together.
    static let perSecond = 10.0

    private var bucket = TokenBucket(capacity: perSecond, ratePerSecond: perSecond)
    /// Connections whose 401 waits, oldest first.
    private var waiting: [OFREPConnection] = []

    var isEmpty: Bool { waiting.isEmpty }

    /// Whether a 401 may be sent now (`now` in seconds); when not, `connection` waits for its turn with `answer`.
    mutating func admit(_ answer: HTTPResponse, on connection: OFREPConnection, now: Double) -> Bool {
        if waiting.isEmpty, bucket.take(now: now) { return true }
        connection.delayedRefusal = answer
        waiting.append(connection)
        return false
    }

    /// The waiting connections whose 401 may go now, oldest first, taken off the queue.
    mutating func due(now: Double) -> [OFREPConnection] {
        var released: [OFREPConnection] = []
        while !waiting.isEmpty, bucket.take(now: now) { released.append(waiting.removeFirst()) }
        return released
    }

    /// A waiting connection closed.
    mutating func forget(_ connection: OFREPConnection) {
        guard connection.delayedRefusal != nil else { return }
        waiting.removeAll { $0 === connection }
    }
}
