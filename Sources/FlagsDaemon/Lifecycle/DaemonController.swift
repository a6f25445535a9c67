import FlagsCore
import FlagsProtocol
import FoundationEssentials
import UnixIO

/// The daemon's side of the requests: carries out the methods that may wait (the network, the disk) on the
/// stack in effect, and knows what `status` reports beyond the server's own counts.
///
/// `RequestRouter` decides which method runs; one method here per control call, called from the async side.
public final class DaemonController: Sendable {
    private let store: FlagStore
    private let reloader: Reloader
    /// When each key last changed, for `explain`.
    private let changes: FlagChangeLog
    /// Refreshes and impressions, for `metrics`.
    let metrics: DaemonMetrics
    /// Kept apart from the stacks: a reload or a user change keeps what was set for the device.
    let overrides: LocalOverrides

    /// `changes` should observe the store from its start; without it, one begins observing now.
    init(
        store: FlagStore, reloader: Reloader, overrides: LocalOverrides, changes: FlagChangeLog? = nil,
        metrics: DaemonMetrics = DaemonMetrics()
    ) {
        self.store = store
        self.reloader = reloader
        self.overrides = overrides
        self.changes = changes ?? FlagChangeLog(observing: store)
        self.metrics = metrics
    }

    /// The stack `status` reads, without waiting for a reload.
    private var stack: SourceStack { reloader.stacks.current }

    /// The `status` the daemon knows; the router fills in the server's own members (connections, flags).
    func status() -> StatusResult {
        let stack = self.stack
        let refresherStatus = stack.refresher.status.withLock { $0 }
        let clock = stack.refresher.clock
        var status = StatusResult()
        refresherStatus.fill(&status, clock: clock)
        status.version = PWFlagsVersion.current
        status.hwid = stack.hwid
        let counts = stack.impressions.counts.withLock { $0 }
        status.impressions = StatusResult.Impressions(
            sent: counts.sent, duplicate: counts.duplicate, failed: counts.failed)
        if let local = stack.local {
            status.source = "file"
            status.applicationCode = nil
            // Edits of the file arrive through inotify, not through the refresher.
            status.fetchedAt = local.loadedAt.map { RefresherStatus.timestamp($0.timeIntervalSince1970) }
            status.nextRefreshAt = nil
            status.problem = local.problem
        } else {
            status.source = "pushwoosh"
            status.applicationCode = stack.configuration.applicationCode
        }
        status.expiresAt =
            FlagExpiry.expiresAt(local: stack.local, refresher: refresherStatus, clock: clock).stringValue
        return status
    }

    /// `explain` for `key` in `snapshot`; the router fills in the subscriptions, which the server owns.
    func explain(key: String, snapshot: FlagSnapshot) -> ExplainResult {
        let stack = self.stack
        let explainer = FlagExplainer(
            snapshot: snapshot, status: status(), ageSeconds: ageSeconds(stack),
            expired: stack.refresher.status.withLock(\.expired),
            changes: changes)
        return explainer.explain(key: key) { Self.source(of: $0, servedBy: stack) }
    }

    /// Where a served flag's value comes from, as `explain` names it: `override`, `file` or `pushwoosh`.
    ///
    /// The flag object says it (the store marks every flag it serves); a flag without the mark is the serving
    /// stack's.
    static func source(of flag: Flag, servedBy stack: SourceStack) -> String {
        flag.source?.rawValue ?? (stack.local != nil ? FlagSource.file : FlagSource.pushwoosh).rawValue
    }

    /// Seconds since the flags served were fetched (Pushwoosh) or read (the file); nil when there are none.
    func ageSeconds(_ stack: SourceStack) -> Double? {
        if let local = stack.local {
            return local.loadedAt.map { max(0, stack.refresher.clock.wallNow() - $0.timeIntervalSince1970) }
        }
        let fetchedAt = stack.refresher.status.withLock(\.fetchedAt)
        return fetchedAt.map { max(0, stack.refresher.clock.bootNow() - $0) }
    }

    /// The `metrics` families: the server's counters (read on its thread) with the daemon's.
    func metricFamilies(server: ServerMetrics, snapshot: FlagSnapshot, connections: Int, subscriptions: Int)
        -> [MetricFamily]
    {
        let stack = self.stack
        let refresher = stack.refresher.status.withLock { $0 }
        return DaemonMetricFamilies(
            server: server, daemon: metrics.current, flags: snapshot.flags.count, revision: snapshot.revision,
            ageSeconds: ageSeconds(stack), stale: refresher.stale, partial: refresher.partial,
            heldSeconds: refresher.heldUntil.map { max(0, $0 - stack.refresher.clock.bootNow()) } ?? 0,
            connections: connections, subscriptions: subscriptions, overrides: store.overrideCount
        ).families
    }

    /// `status.expiresAt`, which `listen` replies and `flagsChanged` notifications carry too.
    func expiresAt() -> JSONValue {
        let stack = self.stack
        return FlagExpiry.expiresAt(
            local: stack.local, refresher: stack.refresher.status.withLock { $0 }, clock: stack.refresher.clock)
    }

    /// `refresh`: fetches now and answers with the flags in effect after it.
    func refresh() async -> Result<any CallResult, RPCError> {
        switch await onActiveStack({ await $0.refresher.refresh() }) {
        case .success(let fromNetwork):
            let snapshot = store.current
            return .success(
                FlagListing(
                    epoch: snapshot.epoch, revision: snapshot.revision, flags: snapshot.flags.sorted,
                    fromNetwork: fromNetwork))
        case .failure(let error):
            return .failure(.refreshFailed(status: error.status, reason: error.reason))
        }
    }

    func setUserId(_ requested: String) async -> Result<any CallResult, RPCError> {
        let (userId, heldUntil) = await onActiveStack { stack in
            let userId = await stack.refresher.setUserId(requested)
            // F3: the new user's request waits for Pushwoosh's Retry-After; the reply says until when.
            let held = stack.refresher.status.withLock(\.heldUntil)
            return (userId, held.map { RefresherStatus.wallText($0, clock: stack.refresher.clock) })
        }
        return .success(SetUserIdResult(userId: userId, heldUntil: heldUntil))
    }

    func setAppState(_ appState: Call.AppState) async -> Result<any CallResult, RPCError> {
        let started = await onActiveStack { await $0.refresher.setAppState(foreground: appState == .foreground) }
        return .success(SetAppStateResult(sessionStarted: started))
    }

    func pushRegistered() async -> Result<any CallResult, RPCError> {
        let started = await onActiveStack { await $0.refresher.pushRegistered() }
        return .success(PushRegisteredResult(refreshStarted: started))
    }

    func logImpression(key: String) async -> Result<any CallResult, RPCError> {
        // An impression that was sent (or found a repeat) before a reload stays answered by the old stack.
        let outcome = await onActiveStack(
            { await $0.impressions.logImpression(key: key) },
            again: { if case .failed = $0 { true } else { false } })
        metrics.impression(outcome.result.outcome)
        return .success(outcome.result)
    }

    func reload() async -> Result<any CallResult, RPCError> {
        switch await reloader.reload() {
        case .success: return .success(EmptyResult())
        case .failure(let errors):
            return .failure(.invalidConfiguration(problems: errors.problems.map(\.description)))
        }
    }

    /// Carries out a control call on the stack in effect, waiting while a reload swaps it.
    ///
    /// A call that reached a stack that a reload then retired is carried out again on the new stack (when
    /// `again` says its outcome depends on it), so that every call is answered by the stack that serves after it:
    /// a `setUserId` sticks, a `refresh` asks for the new source's flags. At shutdown there is no new stack.
    private func onActiveStack<Outcome>(
        _ operation: (SourceStack) async -> Outcome,
        again: (Outcome) -> Bool = { _ in true }
    ) async -> Outcome {
        var stack = await reloader.stacks.active()
        while true {
            let outcome = await operation(stack)
            guard stack.isRetired, again(outcome) else { return outcome }
            let next = await reloader.stacks.active()
            guard next !== stack else { return outcome }
            stack = next
        }
    }
}
