import FlagsCore
import Foundation
import PushwooshAPI
import Synchronization

/// Reports impressions (R17, R18): one `PW_FeatureFlagImpression` per flag, rule and state per session.
///
/// It works beside the refresher, never behind it: an impression neither waits for a flag request nor slows
/// `get`. Concurrent calls for the same impression share one send.
actor ImpressionReporter {
    /// How a `logImpression` ended, as PROTOCOL.md names it.
    enum Outcome: Sendable, Equatable {
        case sent
        case duplicate
        case noFlag
        case failed(status: Int)
        case logged
    }

    /// Counts since start, for `status`.
    struct Counts: Sendable, Equatable {
        var sent = 0
        var duplicate = 0
        var failed = 0
    }

    private let fetcher: any FlagFetcher
    private let store: FlagStore
    private let session: @Sendable () -> (session: Int, userId: String)
    private let logger: Logger
    private var ledger = ImpressionLedger()
    private var sending: [ImpressionLedger.Key: Task<Outcome, Never>] = [:]
    /// Set when a reload replaced this reporter (or at shutdown): it sends nothing more.
    private var retired = false

    /// Readable without waiting on the actor.
    nonisolated let counts = Mutex(Counts())

    init(
        fetcher: any FlagFetcher,
        store: FlagStore,
        logger: Logger,
        session: @escaping @Sendable () -> (session: Int, userId: String)
    ) {
        self.fetcher = fetcher
        self.store = store
        self.logger = logger
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
        let (session, userId) = self.session()
        let impression = ImpressionLedger.Key(flag)
        switch ledger.claim(impression, session: session) {
        case .duplicate:
            counts.withLock { $0.duplicate += 1 }
            return .duplicate
        case .inFlight:
            guard let task = sending[impression] else { return .duplicate }
            let first = await task.value
            // The first caller's send answers this one too: one event, never two.
            if case .failed = first { return first }
            counts.withLock { $0.duplicate += 1 }
            return .duplicate
        case .send:
            let task = Task { await self.send(flag, userId: userId) }
            sending[impression] = task
            let outcome = await task.value
            sending[impression] = nil
            let succeeded = outcome == .sent || outcome == .logged
            ledger.finish(impression, session: session, sent: succeeded)
            return outcome
        }
    }

    private func send(_ flag: Flag, userId: String) async -> Outcome {
        // Status 0: never sent (R11); the caller sends it again through the stack that replaced this one.
        guard !retired else { return .failed(status: 0) }
        guard let result = await fetcher.sendImpression(of: flag, userId: userId, date: Date()) else {
            logger.info(
                "feature flag impression",
                [
                    "PWFLAGS_EVENT": "impression", "FLAG_KEY": flag.key, "RULE_ID": flag.ruleId,
                    "ENABLED": String(flag.isEnabled),
                ]
            )
            counts.withLock { $0.sent += 1 }
            return .logged
        }
        switch result {
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
