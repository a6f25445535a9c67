import FlagsCore
import FlagsProtocol
import UnixIO

/// Who may make a call, and how often: decided here once for every surface that carries calls (the line
/// socket, Varlink, D-Bus), so that a rule holds on all of them or on none.
///
/// - `reload`: root and the daemon's own user only.
/// - The control methods (`Call.isControl`): `ControlGroups` (`AccessPolicy`).
/// - The methods that write the state directory (`StateWriteRate`): one bucket per peer user, whichever surface
///   the calls come through, so that a second surface does not double a user's rate.
///
/// Refusals are logged at most once a second of each kind, with the surface and the peer's user. The reads
/// (`get`, `isEnabled`, …) pass without a look at any of it: the hot path takes no lock here.
final class CallPolicy: Sendable {
    private struct State {
        var access: AccessPolicy
        var writeRate = StateWriteRate()
        var refusedCalls = LogThrottle()
        var refusedWrites = LogThrottle()
    }

    private let state: Locked<State>
    private let logger: Logger

    init(access: AccessPolicy, logger: Logger) {
        state = Locked(State(access: access))
        self.logger = logger
    }

    /// `ControlGroups` as the last reload left it.
    var access: AccessPolicy {
        get { state.withLock(\.access) }
        set { state.withLock { $0.access = newValue } }
    }

    /// Root and the daemon's own user, who may do anything.
    func isPrivileged(_ caller: Caller) -> Bool {
        access.isPrivileged(caller.credentials)
    }

    /// Whether `caller` may make the control calls.
    func mayControl(_ caller: Caller) -> Bool {
        access.mayControl(caller.credentials, supplementaryGroups: caller.supplementaryGroups)
    }

    /// Whether any rule here bears on `call`: `reload` and the control methods. The others (the reads,
    /// `refresh`, `logImpression`, …) are for every peer that may connect, and a surface need not make a
    /// `Caller` for them.
    static func applies(to call: Call) -> Bool {
        if case .reload = call { return true }
        return call.isControl
    }

    /// Why `caller` may not make `call` now (`notPermitted`, `tooManyStateChanges`), or nil when it may. A
    /// state write that passes is counted against the caller's user.
    func refusal(of call: Call, from caller: Caller, now: UInt64 = EngineClock.now()) -> RPCError? {
        guard Self.applies(to: call) else { return nil }
        let privilegedOnly = if case .reload = call { true } else { false }
        // The log line, when one is due, is written after the lock is let go.
        let (refusal, note) = state.withLock { state -> (RPCError?, (message: String, count: Int)?) in
            let privileged = state.access.isPrivileged(caller.credentials)
            let permitted =
                privilegedOnly
                ? privileged
                : state.access.mayControl(caller.credentials, supplementaryGroups: caller.supplementaryGroups)
            guard permitted else {
                let count = state.refusedCalls.record(now: now)
                return (
                    .notPermitted(call.method, privileged: privilegedOnly),
                    count.map { ("refused a control method", $0) }
                )
            }
            guard StateWriteRate.writesState(call), !privileged,
                let refusal = state.writeRate.refusal(uid: caller.uid, now: Double(now) / 1e9)
            else { return (nil, nil) }
            let count = state.refusedWrites.record(now: now)
            return (refusal, count.map { ("refused state changes past their rate", $0) })
        }
        if let note { self.note(note.message, call, caller, note.count) }
        return refusal
    }

    private func note(_ message: String, _ call: Call, _ caller: Caller, _ count: Int) {
        logger.notice(
            message,
            [
                "METHOD": call.method, "SURFACE": caller.surface.rawValue, "PEER_UID": String(caller.uid),
                "CALLS_REFUSED": String(count),
            ])
    }
}

/// A peer making a call, as the policy judges it: its user and groups, and the surface it came through.
struct Caller {
    /// The surfaces that carry calls, as logs name them.
    enum Surface: String, Sendable {
        case line, varlink, bus
    }

    let surface: Surface
    let uid: UInt32
    let gid: UInt32
    /// The peer's supplementary groups, asked only when `ControlGroups` needs them (nil: unknown).
    let supplementaryGroups: () -> [UInt32]?

    var credentials: PeerCredentials { PeerCredentials(pid: 0, uid: uid, gid: gid) }
}
