import FlagsCore
import Foundation

/// What the refresher knows for `status`, published after every change so the socket loop reads it without
/// waiting on the actor.
///
/// Its times are boot-clock seconds; they become wall times only when shown (`fields(clock:)`), by the wall
/// clock as it reads then, so that `status` is right straight after a wall-clock change.
struct RefresherStatus: Sendable, Equatable {
    var userId: String
    var fetchedAt: Double?
    /// `CacheMaxAge` in seconds, as the policy applies it (a reload may change it).
    var cacheMaxAge: Double = .infinity
    var stale = false
    var partial = false
    var lastError: (status: Int, at: Double)?
    var nextRefreshAt: Double?
    var foreground: Bool
    var sessionStartedAt: Double?
    var session: Int
    var problem: String?
    /// Why the disk cache could not be written (or removed) the last time, until a write succeeds.
    var cacheError: (reason: String, at: Double)?

    static func == (lhs: RefresherStatus, rhs: RefresherStatus) -> Bool {
        lhs.userId == rhs.userId && lhs.fetchedAt == rhs.fetchedAt && lhs.stale == rhs.stale
            && lhs.partial == rhs.partial && lhs.lastError?.status == rhs.lastError?.status
            && lhs.lastError?.at == rhs.lastError?.at && lhs.nextRefreshAt == rhs.nextRefreshAt
            && lhs.foreground == rhs.foreground && lhs.sessionStartedAt == rhs.sessionStartedAt
            && lhs.session == rhs.session && lhs.problem == rhs.problem
            && lhs.cacheMaxAge == rhs.cacheMaxAge && lhs.cacheError?.reason == rhs.cacheError?.reason
            && lhs.cacheError?.at == rhs.cacheError?.at
    }

    /// The `status` members (README, Protocol) this part of the daemon owns, with wall times read from `clock`
    /// now.
    func fields(clock: any DaemonClock) -> [String: JSONValue] {
        let wall = WallTimes(clock)
        return [
            "userId": .string(userId),
            "fetchedAt": wall.timestamp(fetchedAt),
            "stale": .bool(stale),
            "partial": .bool(partial),
            "lastError": lastError.map { ["status": .number(Double($0.status)), "at": wall.timestamp($0.at)] } ?? .null,
            "nextRefreshAt": wall.timestamp(nextRefreshAt),
            "appState": .string(foreground ? "foreground" : "background"),
            "sessionStartedAt": wall.timestamp(sessionStartedAt),
            "problem": problem.map(JSONValue.string) ?? .null,
            "cacheError": cacheError.map { ["reason": .string($0.reason), "at": wall.timestamp($0.at)] } ?? .null,
        ]
    }

    /// `status.expiresAt`: when the flags fetched at `fetchedAt` reach `maxAge` (R15), so that a client mirror
    /// knows how long it may serve them while the daemon is away; null without flags or without an age limit.
    func expiresAt(maxAge: Double, clock: any DaemonClock) -> JSONValue {
        guard let fetchedAt, maxAge.isFinite else { return .null }
        return WallTimes(clock).timestamp(fetchedAt + maxAge)
    }

    /// Boot-clock times as wall times, both clocks read once.
    private struct WallTimes {
        let boot: Double
        let wall: Double

        init(_ clock: any DaemonClock) {
            boot = clock.bootNow()
            wall = clock.wallNow()
        }

        func timestamp(_ bootTime: Double?) -> JSONValue {
            RefresherStatus.timestamp(bootTime.map { wall - (boot - $0) })
        }
    }

    /// Unix seconds as ISO 8601 in UTC, or null.
    static func timestamp(_ seconds: Double?) -> JSONValue {
        guard let seconds else { return .null }
        return .string(Date(timeIntervalSince1970: seconds).formatted(.iso8601))
    }
}
