import FlagsCore
import FlagsProtocol
import FoundationEssentials

/// What the library knows of the daemon's flags: the flags, the revision they stand at, and until when they
/// may be served without the daemon (R15).
///
/// A value with no I/O and no clock: the subscriber thread feeds it messages and the time, which is what lets
/// the tests drive expiry with an injected clock instead of waiting a day.
struct FlagMirror: Sendable {
    /// The flags `get` answers from.
    private(set) var flags = FlagSet()
    /// The daemon's revision of `flags`; comparable only within one subscription (`generation`).
    private(set) var revision = 0
    /// Counts subscriptions: each reconnect, maybe to a restarted daemon, starts a new revision sequence.
    private(set) var generation = 0
    /// True once a first `listen` snapshot arrived; `get` returns nil and `isEnabled` the default before.
    private(set) var hasSnapshot = false
    /// True while the subscription that feeds the mirror is open.
    private(set) var isConnected = false
    /// When the flags reach `CacheMaxAge` (the daemon's `status.expiresAt`); nil when they never expire
    /// (the local file source) or the daemon did not say.
    private(set) var expiresAt: Date?

    /// The daemon's epoch of `revision`: nil before the first snapshot, from a daemon that sends none, and once
    /// the flags were dropped for their age (they are no longer the flags of that revision).
    private(set) var epoch: String?

    /// The `since` of the next `listen`: where the flags the mirror holds stand in the daemon's change stream.
    var resumePoint: StreamPosition? {
        guard hasSnapshot, let epoch else { return nil }
        return StreamPosition(epoch: epoch, revision: revision)
    }

    /// A new subscription's snapshot replaces everything: the reconciliation after a (re)connect. An
    /// `unchanged` answer keeps the flags: it answers the `resumePoint` (the subscriber takes no other), so they
    /// are what the daemon serves. It never empties the mirror, having no flags of its own.
    mutating func subscribed(to listing: FlagListing, expiresAt: Date?) -> FlagDiff {
        generation += 1
        isConnected = true
        self.expiresAt = expiresAt
        if listing.unchanged { return FlagDiff() }
        hasSnapshot = true
        revision = listing.revision
        epoch = listing.epoch
        return replace(with: FlagSet(listing.flags))
    }

    /// Applies a `flagsChanged` of the current subscription; one the mirror already holds changes nothing.
    mutating func apply(_ change: FlagsChanged) -> FlagDiff {
        guard isConnected, change.revision > revision else { return FlagDiff() }
        revision = change.revision
        epoch = change.epoch ?? epoch
        // By byte-exact key, as the daemon keeps them (R2): canonically equivalent keys stay two flags.
        var updated = flags.entries
        for flag in change.changed { updated[FlagKey(flag.key)] = flag }
        for key in change.removed { updated[FlagKey(key)] = nil }
        return replace(with: FlagSet(Array(updated.values)))
    }

    /// Applies a `refresh` answer when it is newer than the mirror, so the caller's completion sees its flags.
    ///
    /// The answer came over another connection: it is used only when the subscription of `generation`, the one
    /// open when the refresh was sent, is still the current one, so that revisions of two daemons never meet.
    /// `expiresAt` is the age read after the refresh: a refresh that fetched identical flags changes no flag
    /// and sends no notification, yet makes them younger.
    mutating func applyRefresh(_ listing: FlagListing, generation: Int, expiresAt: Date?) -> FlagDiff {
        guard isConnected, generation == self.generation else { return FlagDiff() }
        self.expiresAt = expiresAt
        guard listing.revision > revision else { return FlagDiff() }
        revision = listing.revision
        return replace(with: FlagSet(listing.flags))
    }

    /// Records the expiry the daemon reported in `status`.
    mutating func setExpiry(_ expiresAt: Date?) {
        self.expiresAt = expiresAt
    }

    /// The subscription closed: the flags stay, until `expireIfDue` says they are too old.
    mutating func disconnected() {
        isConnected = false
    }

    /// Drops the flags once they are past their age while the daemon cannot be asked (R15): callers get their
    /// defaults and listeners are told, as the daemon itself would do. Overridden flags stay, as they do in the
    /// daemon: a local override has no age. Their source's value (`sourceValue`) goes with the source's flags.
    mutating func expireIfDue(now: Date) -> FlagDiff {
        guard !isConnected, let expiresAt, now >= expiresAt else { return FlagDiff() }
        self.expiresAt = nil
        epoch = nil
        let overridden = flags.entries.values.filter(\.isOverridden).map { flag in
            var kept = flag
            kept.sourceValue = nil
            return kept
        }
        return replace(with: FlagSet(overridden))
    }

    /// How long until `expireIfDue` drops the flags; nil when it never will.
    func timeUntilExpiry(now: Date) -> TimeInterval? {
        guard !isConnected, !flags.isEmpty, let expiresAt else { return nil }
        return max(0, expiresAt.timeIntervalSince(now))
    }

    private mutating func replace(with newer: FlagSet) -> FlagDiff {
        let diff = flags.diff(to: newer)
        flags = newer
        return diff
    }
}
