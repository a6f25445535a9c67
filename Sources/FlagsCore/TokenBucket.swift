/// A token bucket: up to `capacity` at once, then `ratePerSecond` on average. Time comes in as a parameter.
public struct TokenBucket: Sendable, Equatable {
    public let capacity: Double
    public let ratePerSecond: Double
    private var tokens: Double
    private var updatedAt: Double?

    public init(capacity: Double, ratePerSecond: Double) {
        self.capacity = capacity
        self.ratePerSecond = ratePerSecond
        self.tokens = capacity
    }

    /// Takes one token at `now` when there is one; false when the caller must hold back.
    public mutating func take(now: Double) -> Bool {
        if let updatedAt, now > updatedAt {
            tokens = min(capacity, tokens + (now - updatedAt) * ratePerSecond)
        }
        updatedAt = max(now, updatedAt ?? now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
