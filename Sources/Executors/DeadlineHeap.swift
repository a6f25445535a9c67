/// The scheduled jobs, earliest first: a binary min-heap on each job's estimated time on the boot clock
/// (`Deadline.bootEstimate`), jobs of the same estimate in the order they were scheduled. Generic for its tests.
struct DeadlineHeap<Job> {
    struct Entry {
        /// The boot clock's reading at which the job is due, as estimated when it was (re)inserted.
        var estimate: Int64
        /// Scheduling order, which breaks ties.
        var sequence: UInt64
        var deadline: Deadline
        var job: Job
    }

    private var entries: [Entry] = []
    private var nextSequence: UInt64 = 0

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// The earliest entry.
    var first: Entry? { entries.first }

    /// Adds `job`, due at `deadline`.
    mutating func insert(_ job: Job, at deadline: Deadline) {
        insert(Entry(estimate: deadline.bootEstimate, sequence: nextSequence, deadline: deadline, job: job))
        nextSequence &+= 1
    }

    /// Adds an entry taken out earlier, with its estimate made again (its place among equals kept).
    mutating func reinsert(_ entry: Entry) {
        var entry = entry
        entry.estimate = entry.deadline.bootEstimate
        insert(entry)
    }

    /// Takes out the earliest entry.
    mutating func removeFirst() -> Entry? {
        guard !entries.isEmpty else { return nil }
        entries.swapAt(0, entries.count - 1)
        let first = entries.removeLast()
        var index = 0
        while true {
            let left = 2 * index + 1
            let right = left + 1
            var smallest = index
            if left < entries.count, Self.precedes(entries[left], entries[smallest]) { smallest = left }
            if right < entries.count, Self.precedes(entries[right], entries[smallest]) { smallest = right }
            if smallest == index { return first }
            entries.swapAt(index, smallest)
            index = smallest
        }
    }

    private mutating func insert(_ entry: Entry) {
        entries.append(entry)
        var index = entries.count - 1
        while index > 0 {
            let parent = (index - 1) / 2
            guard Self.precedes(entries[index], entries[parent]) else { return }
            entries.swapAt(index, parent)
            index = parent
        }
    }

    private static func precedes(_ a: Entry, _ b: Entry) -> Bool {
        // The sequence's difference, not its value, so that ordering survives its wrapping.
        a.estimate < b.estimate || (a.estimate == b.estimate && Int64(bitPattern: a.sequence &- b.sequence) < 0)
    }
}
