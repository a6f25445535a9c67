import FlagsCore
import FlagsProtocol
import FoundationEssentials
import PushwooshAPI
import UnixIO

/// Reports impressions (R17, R18): one `PW_FeatureFlagImpression` per flag, rule and state per session of a user.
///
/// It works beside the refresher, never behind it: an impression neither waits for a flag request nor slows
/// `get`. Concurrent calls for the same impression in the same period share one send.
///
/// Sends to Pushwoosh are bounded: `burst` at once (a screen that logs all its flags), then about one a second.
/// An impression held back is answered `failed` with status 0 (never sent) and is not recorded as sent, so the
/// next `logImpression` of that flag sends it (R18): nothing is lost, and no local loop floods the server.
actor ImpressionReporter {
    /// How a `logImpression` ended, as docs/protocol.md names it.
    enum Outcome: Sendable, Equatable {
        case sent
        case duplicate
        case noFlag
        case failed(status: Int)
        case logged
        case overridden

        /// The `logImpression` result that tells it.
        var result: LogImpressionResult {
            switch self {
            case .sent: .sent
            case .duplicate: .duplicate
            case .noFlag: .noFlag
            case .failed(let status): .failed(status: status)
            case .logged: .logged
            case .overridden: .overridden
            }
        }
    }

    /// Counts since start, for `status`.
    struct Counts: Sendable, Equatable {
        var sent = 0
        var duplicate = 0
        var failed = 0
        /// Written to the log by the local source: never sent, so not counted as `sent` (as metrics'
        /// outcome="logged").
        var logged = 0
    }

    /// A send in flight belongs to its period (a user's session): one of session N never answers, nor is confused
    /// with, N + 1 or another user's.
    private struct Send: Hashable {
        var period: ImpressionLedger.Period
        var impression: ImpressionLedger.Key
    }

    /// Impressions sent at once before the bound holds them back.
    static let burst = 30.0
    /// Impressions a second after the burst.
    static let ratePerSecond = 1.0

    /// Where impressions are sent; nil: they are logged instead (the local file).
    private let fetcher: (any FlagFetcher)?
    private let store: FlagStore
    private let session: @Sendable () -> (session: Int, userId: String)
    private let logger: Logger
    private let clock: any DaemonClock
    private var ledger = ImpressionLedger()
    private var sending: [Send: Task<Outcome, Never>] = [:]
    private var bucket = TokenBucket(
        capacity: ImpressionReporter.burst, ratePerSecond: ImpressionReporter.ratePerSecond)
    /// When the log last said impressions are held back: at most once a second.
    private var heldBackLoggedAt: Double?
    /// Set when a reload replaced this reporter (or at shutdown): it sends nothing more.
    private var retired = false

    /// Readable without waiting on the actor.
    nonisolated let counts = Locked(Counts())

    init(
        fetcher: (any FlagFetcher)?,
        store: FlagStore,
        logger: Logger,
        clock: any DaemonClock = SystemClock(),
        session: @escaping @Sendable () -> (session: Int, userId: String)
    ) {
        self.fetcher = fetcher
        self.store = store
        self.logger = logger
        self.clock = clock
        self.session = session
    }

    /// Shutdown: sends in flight are cancelled, so that stopping never waits for a slow server.
    func shutdown() {
        for task in sending.values { task.cancel() }
    }

    /// A reload replaced this reporter, or the daemon stops: sends in flight are cancelled and none starts.
    func retire() {
        retired = true
        shutdown()
    }

    func logImpression(key: String) async -> Outcome {
        guard let flag = store.current.flags[key] else { return .noFlag }
        // A QA device's forced value must never skew an experiment: nothing is sent, nor recorded as sent, so the
        // source's own value is reported once the override is cleared.
        guard !flag.isOverridden else { return .overridden }
        let (session, userId) = self.session()
        let period = ImpressionLedger.Period(session: session, userId: userId)
        let impression = ImpressionLedger.Key(flag)
        switch ledger.claim(impression, in: period) {
        case .duplicate:
            counts.withLock { $0.duplicate += 1 }
            return .duplicate
        case .inFlight:
            guard let task = sending[Send(period: period, impression: impression)] else { return .duplicate }
            let first = await task.value
            // The first caller's send answers this one too: one event, never two.
            if case .failed = first { return first }
            counts.withLock { $0.duplicate += 1 }
            return .duplicate
        case .send:
            guard fetcher == nil || takeToken() else {
                ledger.finish(impression, in: period, sent: false)
                counts.withLock { $0.failed += 1 }
                return .failed(status: 0)
            }
            let send = Send(period: period, impression: impression)
            let task = Task { await self.send(flag, userId: userId) }
            sending[send] = task
            let outcome = await task.value
            sending[send] = nil
            let succeeded = outcome == .sent || outcome == .logged
            ledger.finish(impression, in: period, sent: succeeded)
            return outcome
        }
    }

    /// One token of the bound on sends to Pushwoosh; logs, at most once a second, when there is none.
    private func takeToken() -> Bool {
        let now = clock.bootNow()
        if bucket.take(now: now) { return true }
        if heldBackLoggedAt.map({ now - $0 >= 1 }) ?? true {
            heldBackLoggedAt = now
            logger.notice(
                "impressions are held back: more than \(Int(Self.burst)) at once, then one a second;"
                    + " each is sent by a later logImpression",
                ["PWFLAGS_EVENT": "impressions-held-back"])
        }
        return false
    }

    private func send(_ flag: Flag, userId: String) async -> Outcome {
        // Status 0: never sent (R11); the caller sends it again through the stack that replaced this one.
        guard !retired else { return .failed(status: 0) }
        guard let fetcher else {
            logger.info(
                "feature flag impression",
                [
                    "PWFLAGS_EVENT": "impression", "FLAG_KEY": flag.key, "RULE_ID": flag.ruleId,
                    "ENABLED": String(flag.isEnabled),
                ]
            )
            counts.withLock { $0.logged += 1 }
            return .logged
        }
        switch await fetcher.sendImpression(of: flag, userId: userId, date: Date()) {
        case .success:
            counts.withLock { $0.sent += 1 }
            logger.debug("sent an impression", ["FLAG_KEY": flag.key, "RULE_ID": flag.ruleId])
            return .sent
        case .failure(let error):
            counts.withLock { $0.failed += 1 }
            logger.warning(
                "an impression could not be sent; the next logImpression sends it again: \(error.reason)",
                ["FLAG_KEY": flag.key, "HTTP_STATUS": String(error.status), "PWFLAGS_EVENT": "impression-failed"]
            )
            return .failed(status: error.status)
        }
    }
}
