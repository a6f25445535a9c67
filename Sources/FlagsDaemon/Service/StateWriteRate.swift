import FlagsCore
import FlagsProtocol

/// The rate at which a peer user's control calls may write the state directory and the log: `setUserId`,
/// `setOverride` and `clearOverride` each write a file (two fsyncs and a rename) and a log line.
///
/// Without a bound, one connection made about 800 such calls a second: flash wear on a device's eMMC, and a
/// journal rate limit that then dropped other services' lines. Each peer user has a bucket of `burst` calls,
/// refilled at `perSecond`; past it a call is refused with -32004 and changes nothing, so the last change
/// answered is the one on disk. Root and the daemon's user, who may do anything to the device anyway, are not
/// counted (`CallPolicy` asks `AccessPolicy.isPrivileged` first).
///
/// Kept by `CallPolicy`, under its lock: one bucket per user whichever surface the calls come through.
struct StateWriteRate {
    static let perSecond = 5.0
    static let burst = 20.0

    private var buckets: [UInt32: TokenBucket] = [:]

    /// Whether `call` writes the state directory, and so counts.
    static func writesState(_ call: Call) -> Bool {
        switch call {
        case .setUserId, .setOverride, .clearOverride: true
        default: false
        }
    }

    /// The refusal of one more such call from `uid` now (`now` in seconds), or nil when it may go.
    mutating func refusal(uid: UInt32, now: Double) -> RPCError? {
        var bucket = buckets[uid] ?? TokenBucket(capacity: Self.burst, ratePerSecond: Self.perSecond)
        defer { buckets[uid] = bucket }
        guard !bucket.take(now: now) else { return nil }
        return .tooManyStateChanges(retryAfter: Int((1 / Self.perSecond).rounded(.up)))
    }
}
