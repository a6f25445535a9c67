/// The jobs ready to run, first in first out: a ring buffer that grows by doubling and never shrinks (the
/// daemon's queue stays short; a burst's capacity is kept for the next one). Generic for its tests.
struct JobQueue<Element> {
    private var slots: [Element?] = Array(repeating: nil, count: 16)
    private var head = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ job: Element) {
        if count == slots.count {
            // Unrolled from head so that the order survives the growth.
            slots = Array(slots[head...] + slots[..<head]) + Array(repeating: nil, count: slots.count)
            head = 0
        }
        slots[(head + count) % slots.count] = job
        count += 1
    }

    mutating func popFirst() -> Element? {
        guard let job = slots[head] else { return nil }
        slots[head] = nil
        head = (head + 1) % slots.count
        count -= 1
        return job
    }
}
