/// The simulator's event queue: a calendar queue of one bucket per simulated second, each bucket put in time
/// order when its second comes, so events come out earliest first.
///
/// A binary heap of a million pending wakes costs some twenty cache misses a pop; here a push is an append and
/// a pop a step through a sorted bucket, which is what lets a million devices run for days in well under a
/// minute. Events at or after `end` are dropped: the simulation stops there.
struct EventQueue {
    private struct Event {
        var time: Double
        var device: Int32
    }

    private var buckets: [[Event]]
    /// The second being handed out, its events in time order, and the next one to hand out.
    private var second = 0
    private var current: [Event] = []
    private var position = 0
    private let end: Double

    init(end: Double) {
        self.end = end
        buckets = Array(repeating: [], count: max(1, Int(end.rounded(.up)) + 1))
    }

    mutating func push(_ time: Double, device: Int) {
        guard time < end else { return }
        let bucket = max(Int(time), second)
        buckets[bucket].append(Event(time: time, device: Int32(device)))
    }

    /// Removes and returns the earliest event; an event pushed into the second being handed out comes after
    /// the ones already sorted (within that second).
    mutating func pop() -> (time: Double, device: Int)? {
        while true {
            if position < current.count {
                let event = current[position]
                position += 1
                return (event.time, Int(event.device))
            }
            if !buckets[second].isEmpty {
                swap(&current, &buckets[second])
                buckets[second].removeAll(keepingCapacity: true)
                current.sort { $0.time < $1.time }
                position = 0
                continue
            }
            guard second + 1 < buckets.count else { return nil }
            buckets[second] = []
            second += 1
        }
    }
}
