/// The rate rule for OFREP clients: each peer may make `perSecond` requests a second on average, in bursts of
/// up to `perSecond`; past it a request gets 429 with the whole seconds until it would be served.
///
/// A peer is what the listener can tell apart: the user id of a Unix socket client, the address of a TCP one
/// (every loopback client shares 127.0.0.1). Time comes in as a parameter, in seconds of a monotonic clock.
public struct OFREPRateLimiter: Sendable {
    struct Bucket: Sendable {
        var tokens: Double
        var updatedAt: Double
    }

    /// 0: no limit.
    public let perSecond: Int
    /// Each peer's bucket, by peer.
    private(set) var buckets: [String: Bucket] = [:]
    /// Peers remembered at once; beyond it, peers whose bucket has refilled are forgotten.
    static let maximumPeers = 1024

    public init(perSecond: Int) {
        self.perSecond = perSecond
    }

    /// Takes one request of `peer` at `now`: nil to serve it, else the seconds to wait (at least 1).
    public mutating func admit(_ peer: String, now: Double) -> Int? {
        guard perSecond > 0 else { return nil }
        let rate = Double(perSecond)
        var bucket = buckets[peer] ?? Bucket(tokens: rate, updatedAt: now)
        if now > bucket.updatedAt {
            bucket.tokens = min(rate, bucket.tokens + (now - bucket.updatedAt) * rate)
            bucket.updatedAt = now
        }
        defer {
            buckets[peer] = bucket
            if buckets.count > Self.maximumPeers { forgetRefilled(now: now) }
        }
        guard bucket.tokens >= 1 else {
            let wait = (1 - bucket.tokens) / rate
            return max(1, Int(wait.rounded(.up)))
        }
        bucket.tokens -= 1
        return nil
    }

    private mutating func forgetRefilled(now: Double) {
        let rate = Double(perSecond)
        buckets = buckets.filter { $0.value.tokens + (now - $0.value.updatedAt) * rate < rate }
    }
}
