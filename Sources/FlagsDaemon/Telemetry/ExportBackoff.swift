/// How long an export waits after a failure: doubling from a second to five minutes, each wait drawn at random
/// from its upper half, so that a fleet whose collector comes back never asks again in lockstep (F1).
///
/// A collector's `Retry-After` (429, 503) is honoured up to an hour, with up to a tenth more at random for the
/// same reason. A success starts the doubling over.
struct ExportBackoff: Sendable, Equatable {
    static let first = Duration.seconds(1)
    static let ceiling = Duration.seconds(300)
    static let longestRetryAfter = Duration.seconds(3600)

    /// Failures in a row.
    private(set) var failures = 0

    /// The wait after one more failure; `retryAfter` in seconds when the collector said one, `random` in 0..<1.
    mutating func next(retryAfter: Double?, random: Double) -> Duration {
        failures += 1
        if let retryAfter {
            let asked = min(Self.longestRetryAfter, .milliseconds(Int64(max(0, retryAfter) * 1000)))
            return asked + asked * (random / 10)
        }
        let doubled = Self.first * (1 << min(failures - 1, 20))
        let top = min(Self.ceiling, doubled)
        return top / 2 + (top / 2) * random
    }

    mutating func succeeded() {
        failures = 0
    }
}
