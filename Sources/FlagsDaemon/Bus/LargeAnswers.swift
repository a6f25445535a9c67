/// An answer this size or larger waits its turn (`LargeAnswers`).
let largeAnswerBytes = 64 << 10

/// The calls whose answers are large (`GetAll`, or `Get` of a large flag, on a large set), waiting their turn.
/// Bus thread only.
///
/// Such an answer holds up every other: the bus thread while it is built, and then the connection to the bus,
/// one stream that carries every answer in order, while the bus reads it (dbus-daemon reads, checks and copies
/// 16 MB in tens of milliseconds, and does nothing else for the daemon's callers meanwhile). So the loop writes
/// one at a time: it answers every other call that came in, then the next large one, the senders taking turns,
/// not before the last has left for the bus, and at most `bytesPerSecond` of them. A member keeping calls in
/// flight delays another member's call by one answer at most, most of its calls by none, and the daemon holds one
/// such answer at a time whatever the number of callers.
///
/// What waits is bounded, per sender and in all, as `BusPeers` bounds the calls held there: past it, calls are
/// refused at once. `Call` is what the loop keeps of a call (the message and its sender's peer).
struct LargeAnswers<Call> {
    static var perSender: Int { 16 }
    static var inAll: Int { 1024 }
    /// The pace of large answers, all senders together: a near-limit set's 16 MB `GetAll` twice a second, which
    /// keeps dbus-daemon busy with them a quarter of the time (it takes about 130 ms to pass one on).
    static var bytesPerSecond: Int { 32 << 20 }

    private var waiting: [String: [(call: Call, size: Int)]] = [:]
    /// The senders with calls waiting, in the order of their turns.
    private var turns: [String] = []
    private(set) var count = 0
    /// When the next answer may be written (`MonotonicClock.nanoseconds`): the pace after the last.
    private(set) var readyAt: UInt64 = 0

    var isEmpty: Bool { count == 0 }

    /// Queues `call` of `sender`'s, whose answer will be about `size` bytes; false when too many wait.
    mutating func queue(_ call: Call, size: Int, from sender: String) -> Bool {
        guard count < Self.inAll else { return false }
        if let calls = waiting[sender] {
            guard calls.count < Self.perSender else { return false }
            waiting[sender]?.append((call, size))
        } else {
            waiting[sender] = [(call, size)]
            turns.append(sender)
        }
        count += 1
        return true
    }

    /// The next call to answer at `now`, if the pace allows one: the first of the sender whose turn it is, who
    /// then goes to the back.
    mutating func next(now: UInt64) -> Call? {
        guard now >= readyAt, !turns.isEmpty else { return nil }
        let sender = turns.removeFirst()
        guard var calls = waiting.removeValue(forKey: sender), !calls.isEmpty else { return next(now: now) }
        let first = calls.removeFirst()
        count -= 1
        if !calls.isEmpty {
            waiting[sender] = calls
            turns.append(sender)
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
