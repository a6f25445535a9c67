import FlagsCore
import FlagsProtocol

/// What the stack tells people: the `status` answer, the `explain` answer, the status line and the age of the
/// flags, each built here once, from the refresher's published status, what the source says of itself and the
/// expiry the store keeps with the flags.
extension ProviderStack {
    /// The `status` answer, whole: `snapshot` is the flag set the reply describes (the server's), `connections`
    /// and `subscriptions` the server's counts.
    func status(store: FlagStore, snapshot: FlagSnapshot, connections: Int, subscriptions: Int) -> StatusResult {
        var status = status(refresher.status.withLock { $0 }, store: store)
        status.flags = snapshot.flags.count
        status.revision = snapshot.revision
        status.epoch = snapshot.epoch
        status.connections = connections
        status.subscriptions = subscriptions
        return status
    }

    /// The `explain` answer for `key` in `snapshot`: `changes` knows when each key last changed, `subscriptions`
    /// is how many subscriptions hear of it.
    func explain(
        key: String, store: FlagStore, snapshot: FlagSnapshot, changes: FlagChangeLog, subscriptions: Int
    ) -> ExplainResult {
        let refresherStatus = refresher.status.withLock { $0 }
        let explainer = FlagExplainer(
            snapshot: snapshot, status: status(refresherStatus, store: store),
            ageSeconds: provider.ageSeconds(refresher: refresherStatus, clock: refresher.clock),
            expired: refresherStatus.expired, changes: changes, subscriptions: subscriptions, servedBy: provider.mark)
        return explainer.explain(key: key)
    }

    /// Seconds since the flags served were fetched (Pushwoosh) or read (the file); nil when there are none.
    func ageSeconds() -> Double? {
        provider.ageSeconds(refresher: refresher.status.withLock { $0 }, clock: refresher.clock)
    }

    /// The line `systemctl status` shows.
    func statusLine(store: FlagStore) -> String {
        provider.statusLine(
            flags: store.current.flags.count, refresher: refresher.status.withLock { $0 }, clock: refresher.clock)
    }

    /// The `status` members the stack knows, from one reading of the refresher's status.
    private func status(_ refresherStatus: RefresherStatus, store: FlagStore) -> StatusResult {
        var status = StatusResult()
        refresherStatus.fill(&status, clock: refresher.clock)
        provider.fill(&status, refresher: refresherStatus)
        status.version = PWFlagsVersion.current
        status.hwid = hwid
        let counts = impressions.counts.withLock { $0 }
        status.impressions = StatusResult.Impressions(
            sent: counts.sent, duplicate: counts.duplicate, failed: counts.failed, logged: counts.logged)
        status.expiresAt = store.expiry.json.stringValue
        return status
    }
}
