/// An answer this size or larger waits its turn (`LargeAnswers`).
let largeAnswerBytes = 64 << 10

/// The calls whose answers are large (`GetAll`, or `Get` of a large flag, on a large set), waiting their turn.
/// Bus thread only.
///
/// Writing one such answer holds the bus thread for as long as it takes to build it (about 50 ms for the 16 MB
/// answer of a near-limit set on a release build), and every call behind it waits. So the loop writes one at a
/// time: it answers every other call that came in, then the next large one, the senders taking turns, and not
/// before the last one has left for the bus. A member keeping calls in flight delays another member's call by
/// one answer at most, and the daemon holds one such answer at a time whatever the number of callers.
///
/// What waits is bounded, per sender and in all, as `BusPeers` bounds the calls held there: past it, calls are
/// refused at once. `Call` is what the loop keeps of a call (the message and its sender's peer).
struct LargeAnswers<Call> {
    static var perSender: Int { 16 }
    static var inAll: Int { 1024 }

    private var waiting: [String: [Call]] = [:]
    /// The senders with calls waiting, in the order of their turns.
    private var turns: [String] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Queues `call` of `sender`'s; false when too many wait.
    mutating func queue(_ call: Call, from sender: String) -> Bool {
        guard count < Self.inAll else { return false }
        if let calls = waiting[sender] {
            guard calls.count < Self.perSender else { return false }
            waiting[sender]?.append(call)
        } else {
            waiting[sender] = [call]
            turns.append(sender)
        }
        count += 1
        return true
    }

    /// The next call to answer: the first of the sender whose turn it is, who then goes to the back.
    mutating func next() -> Call? {
        guard !turns.isEmpty else { return nil }
        let sender = turns.removeFirst()
        guard var calls = waiting.removeValue(forKey: sender), !calls.isEmpty else { return next() }
        let first = calls.removeFirst()
        count -= 1
        if !calls.isEmpty {
            waiting[sender] = calls
            turns.append(sender)
        }
        return first
    }

    /// The connection is gone, and with it everyone to answer.
    mutating func removeAll() {
        waiting.removeAll()
        turns.removeAll()
        count = 0
    }
}
