/// Capped exponential backoff between reconnection attempts: `initial`, doubling, never above `maximum`.
struct Backoff: Sendable {
    let initial: Duration
    let maximum: Duration
    private var last: Duration?

    init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The wait before the next attempt.
    mutating func next() -> Duration {
        let delay = last.map { min($0 * 2, maximum) } ?? initial
        last = delay
        return delay
    }

    /// A working connection: the next failure starts over at `initial`.
    mutating func reset() {
        last = nil
    }
}
