import FlagsCore
import FlagsProtocol
import FoundationEssentials
import UnixIO

/// The flag service every surface calls: who may call what (`policy`), the methods that may wait (the network,
/// the disk) carried out on the stack in effect, and what `status`, `explain` and `metrics` report beyond a
/// surface's own counts.
///
/// Each method answers with its typed result; the surfaces are codecs that turn it into their bytes (the line
/// socket and Varlink write it as JSON, the bus as a message). One method here per control call, called from
/// the async side.
final class FlagService: Sendable {
    private let store: FlagStore
    /// The stack in effect, and the gate control calls wait at while a reload swaps it.
    private let stacks: StackGate
    /// Carries out `reload` (the reloader, above the socket server, hands it down).
    private let reloadConfiguration: @Sendable () async -> Result<Void, ConfigurationErrors>
    /// When each key last changed, for `explain`.
    private let changes: FlagChangeLog
    /// Refreshes and impressions, for `metrics`.
    let metrics: DaemonMetrics
    /// Kept apart from the stacks: a reload or a user change keeps what was set for the device.
    let overrides: LocalOverrides
    /// Where the daemon stands on its bus, as the bus thread last said (nil: `Bus=no`).
    let busStatus = Locked<StatusResult.Bus?>(nil)
    /// Who may call what, and how often, on every surface.
    let policy: CallPolicy
    /// The flag reads every surface answered, for the telemetry's evaluation records.
    let evaluations: EvaluationTally

    /// `changes` should observe the store from its start; without it, one begins observing now.
    init(
        store: FlagStore, stacks: StackGate, reload: @escaping @Sendable () async -> Result<Void, ConfigurationErrors>,
        overrides: LocalOverrides, policy: CallPolicy, changes: FlagChangeLog? = nil,
        metrics: DaemonMetrics = DaemonMetrics(), evaluations: EvaluationTally = EvaluationTally()
    ) {
        self.evaluations = evaluations
        self.store = store
        self.policy = policy
        self.stacks = stacks
        self.reloadConfiguration = reload
        self.overrides = overrides
        self.changes = changes ?? FlagChangeLog(observing: store)
        self.metrics = metrics
    }

    /// The stack `status` reads, without waiting for a reload.
    private var stack: ProviderStack { stacks.current }

    /// The `status` answer for the server's `snapshot` and counts.
    func status(snapshot: FlagSnapshot, connections: Int, subscriptions: Int) -> StatusResult {
        var status = stack.status(
            store: store, snapshot: snapshot, connections: connections, subscriptions: subscriptions)
        status.bus = busStatus.withLock { $0 }
        return status
    }

    /// The `explain` answer for `key` in the server's `snapshot`, heard of by `subscriptions` subscriptions.
    func explain(key: String, snapshot: FlagSnapshot, subscriptions: Int) -> ExplainResult {
        stack.explain(key: key, store: store, snapshot: snapshot, changes: changes, subscriptions: subscriptions)
    }

    /// The `metrics` families: the server's counters (read on its thread) with the daemon's.
    func metricFamilies(
        server: ServerMetrics, snapshot: FlagSnapshot, connections: Int, subscriptions: Int, surfaces: [SurfaceGauge]
    ) -> [MetricFamily] {
        let stack = self.stack
        let refresher = stack.refresher.status.withLock { $0 }
        return DaemonMetricFamilies(
            server: server, daemon: metrics.current, flags: snapshot.flags.count, revision: snapshot.revision,
            ageSeconds: stack.ageSeconds(), stale: refresher.stale, partial: refresher.partial,
            servingSeed: refresher.servingSeed,
            heldSeconds: refresher.heldUntil.map { max(0, $0 - stack.refresher.clock.bootNow()) } ?? 0,
            connections: connections, subscriptions: subscriptions, overrides: store.overrideCount,
            evaluationsDropped: evaluations.droppedTotal, surfaces: surfaces
        ).families
    }

    /// `expiresAt` of a `listen` reply, as the store keeps it with the flags (and `status` reports it).
    func expiresAt() -> JSONValue { store.expiry.json }

    /// `refresh`: fetches now and answers with the flags in effect after it.
    func refresh() async -> Result<FlagListing, RPCError> {
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

    func setUserId(_ requested: String) async -> Result<SetUserIdResult, RPCError> {
        let (changed, heldUntil) = await onActiveStack { stack in
            let changed = await stack.refresher.setUserId(requested)
            // F3: the new user's request waits for Pushwoosh's Retry-After; the reply says until when.
            let held = stack.refresher.status.withLock(\.heldUntil)
            return (changed, held.map { RefresherStatus.wallText($0, clock: stack.refresher.clock) })
        }
        switch changed {
        case .success(let userId): return .success(SetUserIdResult(userId: userId, heldUntil: heldUntil))
        case .failure(let refusal): return .failure(.notDurable(refusal.description))
        }
    }

    func setAppState(_ appState: Call.AppState) async -> SetAppStateResult {
        let started = await onActiveStack { await $0.refresher.setAppState(foreground: appState == .foreground) }
        return SetAppStateResult(sessionStarted: started)
    }

    func pushRegistered() async -> PushRegisteredResult {
        let started = await onActiveStack { await $0.refresher.pushRegistered() }
        return PushRegisteredResult(refreshStarted: started)
    }

    func logImpression(key: String) async -> LogImpressionResult {
        // An impression that was sent (or found a repeat) before a reload stays answered by the old stack.
        let outcome = await onActiveStack(
            { await $0.impressions.logImpression(key: key) },
            again: { if case .failed = $0 { true } else { false } })
        metrics.impression(outcome.result.outcome)
        return outcome.result
    }

    func reload() async -> Result<EmptyResult, RPCError> {
        switch await reloadConfiguration() {
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
        _ operation: (ProviderStack) async -> Outcome,
        again: (Outcome) -> Bool = { _ in true }
    ) async -> Outcome {
        var stack = await stacks.active()
        while true {
            let outcome = await operation(stack)
            guard stack.isRetired, again(outcome) else { return outcome }
            let next = await stacks.active()
            guard next !== stack else { return outcome }
            stack = next
        }
    }
}
