/// Which impressions a user's session has already reported (R18): one per flag, rule and state per session.
///
/// It holds one period at a time, a session of one user: a claim in a newer session, or for another user, forgets
/// what the previous period sent and had in flight, and a send of the previous period that ends later is not
/// recorded (`finish` checks the period). The user counts because a user change reports every impression again
/// (R8d), and with `Lifecycle=client` a user change in the background starts no session.
/// Whoever keeps the sends themselves keys them by period as well.
public struct ImpressionLedger: Sendable, Equatable {
    /// What makes two impressions the same: the flag's key and rule id by their exact bytes (R2), and its state.
    public struct Key: Sendable, Hashable {
        public var flagKey: FlagKey
        public var ruleId: FlagKey
        public var enabled: Bool

        public init(_ flag: Flag) {
            flagKey = FlagKey(flag.key)
            ruleId = FlagKey(flag.ruleId)
            enabled = flag.isEnabled
        }
    }

    /// Whose impressions, and when: a session of one user. Either changing starts a new ledger.
    public struct Period: Sendable, Hashable {
        public var session: Int
        public var userId: String

        public init(session: Int, userId: String) {
            self.session = session
            self.userId = userId
        }
    }

    /// What a caller should do with an impression.
    public enum Claim: Sendable, Equatable {
        /// Send it; report back with `finish`.
        case send
        /// Already sent in this period.
        case duplicate
        /// Another caller is sending it right now.
        case inFlight
    }

    public private(set) var period: Period
    private var sent: Set<Key> = []
    private var sending: Set<Key> = []

    public init(period: Period = Period(session: 0, userId: "")) {
        self.period = period
    }

    /// Claims `key` in `period`; a new session or another user forgets everything the previous period sent.
    public mutating func claim(_ key: Key, in period: Period) -> Claim {
        if period != self.period {
            self = ImpressionLedger(period: period)
        }
        if sent.contains(key) { return .duplicate }
        if sending.contains(key) { return .inFlight }
        sending.insert(key)
        return .send
    }

    /// Records how a claimed send ended: a failure is not recorded as sent, so the next call sends it again.
    public mutating func finish(_ key: Key, in period: Period, sent success: Bool) {
        guard period == self.period else { return }
        sending.remove(key)
        if success { sent.insert(key) }
    }
}
