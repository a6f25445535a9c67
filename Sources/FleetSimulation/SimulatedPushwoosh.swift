/// Pushwoosh as the fleet sees it: answers, fails for an outage, or turns requests away above a capacity.
struct SimulatedPushwoosh {
    enum Answer {
        case complete
        /// An HTTP error, with the seconds of its `Retry-After` when it has one.
        case failed(status: Int, retryAfter: Double?)
    }

    let outage: Range<Double>?
    /// Requests answered per minute at most; nil: no limit.
    let capacityPerMinute: Int?
    let retryAfter: Double
    private var answeredPerMinute: [Int32]

    init(outage: Range<Double>?, capacityPerMinute: Int?, retryAfter: Double, minutes: Int) {
        self.outage = outage
        self.capacityPerMinute = capacityPerMinute
        self.retryAfter = retryAfter
        answeredPerMinute = [Int32](repeating: 0, count: minutes + 1)
    }

    mutating func answer(at time: Double) -> Answer {
        if let outage, outage.contains(time) { return .failed(status: 503, retryAfter: nil) }
        let minute = min(Int(time / 60), answeredPerMinute.count - 1)
        if let capacityPerMinute, Int(answeredPerMinute[minute]) >= capacityPerMinute {
            return .failed(status: 429, retryAfter: retryAfter)
        }
        answeredPerMinute[minute] += 1
        return .complete
    }
}
