/// Which impressions a session has already reported (R18): one per flag, rule and state per session.
///
/// It holds one session at a time: a claim for a newer session forgets what the previous one sent and had in
/// flight, and a send of the previous session that ends later is not recorded (`finish` checks the session).
/// Whoever keeps the sends themselves keys them by session as well.
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

    /// What a caller should do with an impression.
    public enum Claim: Sendable, Equatable {
        /// Send it; report back with `finish`.
        case send
        /// Already sent in this session.
        case duplicate
        /// Another caller is sending it right now.
        case inFlight
    }

    public private(set) var session: Int
    private var sent: Set<Key> = []
    private var sending: Set<Key> = []

    public init(session: Int = 0) {
        self.session = session
    }

    /// Claims `key` in `session`; a new session forgets everything the previous one sent.
    public mutating func claim(_ key: Key, session: Int) -> Claim {
        if session != self.session {
            self = ImpressionLedger(session: session)
        }
        if sent.contains(key) { return .duplicate }
        if sending.contains(key) { return .inFlight }
        sending.insert(key)
        return .send
    }

    /// Records how a claimed send ended: a failure is not recorded as sent, so the next call sends it again.
    public mutating func finish(_ key: Key, session: Int, sent success: Bool) {
        guard session == self.session else { return }
        sending.remove(key)
        if success { sent.insert(key) }
    }
}
