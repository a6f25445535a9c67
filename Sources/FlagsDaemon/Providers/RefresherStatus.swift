import FlagsCore
import FlagsProtocol
import PushwooshAPI

/// What the refresher knows for `status`, published after every change so the socket loop reads it without
/// waiting on the actor.
///
/// Its times are boot-clock seconds; they become wall times only when shown (`fill(_:clock:)`), by the wall
/// clock as it reads then, so that `status` is right straight after a wall-clock change.
struct RefresherStatus: Sendable, Equatable {
    var userId: String
    var fetchedAt: Double?
    var stale = false
    var partial = false
    var lastError: LastFailure?
    var nextRefreshAt: Double?
    /// Pushwoosh's `Retry-After` holds every request back until this (F3).
    var heldUntil: Double?
    var foreground: Bool
    var sessionStartedAt: Double?
    var session: Int
    var problem: String?
    /// Why the disk cache could not be written (or removed) the last time, until a write succeeds.
    var cacheError: (reason: String, at: Double)?
    /// The flags reached `CacheMaxAge` and are no longer served (R15); false again once flags are served.
    var expired = false
    /// The seed's flags (`SeedFile`) are served: no usable flags of the source's own are.
    var servingSeed = false

    static func == (lhs: RefresherStatus, rhs: RefresherStatus) -> Bool {
        lhs.userId == rhs.userId && lhs.fetchedAt == rhs.fetchedAt && lhs.stale == rhs.stale
            && lhs.partial == rhs.partial && lhs.lastError == rhs.lastError && lhs.nextRefreshAt == rhs.nextRefreshAt
            && lhs.heldUntil == rhs.heldUntil && lhs.foreground == rhs.foreground
            && lhs.sessionStartedAt == rhs.sessionStartedAt
            && lhs.session == rhs.session && lhs.problem == rhs.problem
            && lhs.cacheError?.reason == rhs.cacheError?.reason
            && lhs.cacheError?.at == rhs.cacheError?.at && lhs.expired == rhs.expired
            && lhs.servingSeed == rhs.servingSeed
    }

    /// The last failed refresh: its R11 status, kind and reason (never with the token), and when (boot clock).
    struct LastFailure: Sendable, Equatable {
        var status: Int
        var kind: PushwooshError.Kind
        var reason: String
        var at: Double
    }

    /// Fills in the `status` members this part of the daemon owns, with wall times read from `clock` now.
    func fill(_ status: inout StatusResult, clock: any DaemonClock) {
        let wall = WallTimes(clock)
        status.userId = userId
        status.fetchedAt = wall.timestamp(fetchedAt)
        status.stale = stale
        status.partial = partial
        status.lastError = lastError.map {
            StatusResult.LastError(status: $0.status, at: wall.text($0.at), kind: $0.kind.rawValue, reason: $0.reason)
        }
        status.nextRefreshAt = wall.timestamp(nextRefreshAt)
        status.heldUntil = wall.timestamp(heldUntil)
        status.appState = foreground ? "foreground" : "background"
        status.sessionStartedAt = wall.timestamp(sessionStartedAt)
        status.problem = problem
        status.cacheError = cacheError.map { StatusResult.CacheError(reason: $0.reason, at: wall.text($0.at)) }
    }

    /// A boot-clock time as the wall time people read, by `clock` now.
    static func wallText(_ bootTime: Double, clock: any DaemonClock) -> String {
        clock.wallText(bootTime)
    }

    /// Unix seconds as ISO 8601 in UTC.
    static func timestamp(_ seconds: Double) -> String {
        WallTimes.timestamp(seconds)
    }
}
