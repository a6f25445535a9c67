/// An answer this size or larger waits its turn (`LargeAnswers`).
let largeAnswerBytes = 64 << 10

/// The calls whose answers are large (`GetAll`, or `Get` of a large flag, on a large set), waiting their turn.
/// Bus thread only.
///
/// Such an answer holds up every other: the bus thread while it is built, and then the connection to the bus,
/// one stream that carries every answer in order, while the bus reads it (dbus-daemon reads, checks and copies
/// 16 MB in tens of milliseconds, and does nothing else for the daemon's callers meanwhile). So the loop writes
/// one at a time: it answers every other call that came in, then the next large one, the users taking turns
/// (however many connections each has), not before the last has left for the bus, and at most `bytesPerSecond`
/// of them. A member keeping calls in flight delays another member's call by one answer at most, most of its
/// calls by none, and another member's large answer by one of its own; the daemon holds one such answer at a
/// time whatever the number of callers.
///
/// What waits is bounded, per user (as its control calls are: a quarter of `MaxConnections`) and in all, as
/// `BusPeers` bounds the calls held there: past it, calls are refused at once. `Call` is what the loop keeps of a
/// call (the message and its sender's peer).
struct LargeAnswers<Call> {
    static var inAll: Int { 1024 }
    /// The pace of large answers, all senders together: a near-limit set's 16 MB `GetAll` twice a second, which
    /// keeps dbus-daemon busy with them a quarter of the time (it takes about 130 ms to pass one on).
    static var bytesPerSecond: Int { 32 << 20 }

    /// The most calls one user may have waiting.
    let perUser: Int
    private var waiting: [UInt32: [(call: Call, size: Int)]] = [:]
    /// The users with calls waiting, in the order of their turns.
    private var turns: [UInt32] = []
    private(set) var count = 0
    /// When the next answer may be written (`MonotonicClock.nanoseconds`): the pace after the last.
    private(set) var readyAt: UInt64 = 0

    var isEmpty: Bool { count == 0 }

    init(perUser: Int) {
        self.perUser = perUser
    }

    /// Queues `call` of user `uid`'s, whose answer will be about `size` bytes; false when too many wait.
    mutating func queue(_ call: Call, size: Int, from uid: UInt32) -> Bool {
        guard count < Self.inAll else { return false }
        if let calls = waiting[uid] {
            guard calls.count < perUser else { return false }
            waiting[uid]?.append((call, size))
        } else {
            waiting[uid] = [(call, size)]
            turns.append(uid)
        }
        count += 1
        return true
    }

    /// The next call to answer at `now`, if the pace allows one: the first of the user whose turn it is, who
    /// then goes to the back.
    mutating func next(now: UInt64) -> Call? {
        guard now >= readyAt, !turns.isEmpty else { return nil }
        let uid = turns.removeFirst()
        guard var calls = waiting.removeValue(forKey: uid), !calls.isEmpty else { return next(now: now) }
        let first = calls.removeFirst()
        count -= 1
        if !calls.isEmpty {
            waiting[uid] = calls
            turns.append(uid)
        }
        readyAt = now + UInt64(first.size) * 1_000_000_000 / UInt64(Self.bytesPerSecond)
        return first.call
    }

    /// The connection is gone, and with it everyone to answer.
    mutating func removeAll() {
        waiting.removeAll()
        turns.removeAll()
        count = 0
    }
}
