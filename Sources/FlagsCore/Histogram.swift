/// Observations counted into fixed buckets, the way Prometheus histograms hold them: cumulative counts per upper
/// bound, their sum and their count.
public struct Histogram: Sendable, Equatable {
    /// The buckets' upper bounds, ascending; the `+Inf` bucket is implied.
    public let bounds: [Double]
    /// Observations at or below each bound (not cumulative; `cumulativeCounts` adds them up).
    public private(set) var counts: [Int]
    public private(set) var sum = 0.0
    public private(set) var count = 0

    public init(bounds: [Double]) {
        self.bounds = bounds
        self.counts = Array(repeating: 0, count: bounds.count)
    }

    /// Counts one observation.
    public mutating func observe(_ value: Double) {
        sum += value
        count += 1
        if let index = bounds.firstIndex(where: { value <= $0 }) { counts[index] += 1 }
    }

    /// Observations at or below each bound, then the `+Inf` bucket (every observation).
    public var cumulativeCounts: [Int] {
        var running = 0
        return counts.map { count in
            running += count
            return running
        } + [count]
    }
}
