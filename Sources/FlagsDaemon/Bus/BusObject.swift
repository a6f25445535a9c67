import CSystemd
import FlagsCore
import FlagsProtocol
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's object on the bus: answers the interface's calls and property reads, and writes the `Changed`
/// signal. Runs on the loop's thread only (sd-bus calls its handlers from `sd_bus_process`).
///
/// Reads answer at once from the snapshot the loop last took from its feed, as every surface's do; the control
/// calls leave the loop for the flag service and their replies come back through `BusLoop`'s inbox.
final class BusObject {
    static let path = "/io/github/pwflagsd/Flags1"
    static let interface = "io.github.pwflagsd.Flags1"
    static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"

    /// The flags served, as the last change the loop took from its feed left them.
    var snapshot: FlagSnapshot
    private let controller: FlagService
    private let access: BusAccess
    /// The `STATUS=` line, for the `Status` property.
    private let statusLine: () -> String
    /// Hands a control call of a caller's to the async side, whose reply comes back on the loop's thread; false
    /// when the caller already has as many calls in flight as it may (`BusLoop`).
    private let dispatch: Dispatch

    typealias Dispatch = (BusMessage, BusPeer, @escaping @Sendable () async -> BusReply) -> Bool

    init(
        snapshot: FlagSnapshot, controller: FlagService, access: BusAccess, statusLine: @escaping () -> String,
        dispatch: @escaping Dispatch
    ) {
        self.snapshot = snapshot
        self.controller = controller
        self.access = access
        self.statusLine = statusLine
        self.dispatch = dispatch
    }

    /// One method call from `peer` (nil when the bus could not say who sent it); the reply, or nil when it
    /// will come later (a control call).
    func handle(_ call: BusMessage, from peer: BusPeer?) -> BusMessage? {
        guard let member = call.member else { return nil }
        guard let peer, access.mayRead(peer) else {
            return call.errorReply(
                name: Self.accessDenied, text: "not permitted: reading flags is limited to root and the pwflags group")
        }
        switch member {
        case "Get":
            guard let key = call.readString() else { return invalid(call) }
            return get(key, call)
        case "IsEnabled":
            guard let key = call.readString(), let fallback = call.readBool() else { return invalid(call) }
            let flag = snapshot.flags[FlagKey(key)]
            controller.evaluations.evaluated(key, flag: flag, revision: snapshot.revision)
            let reply = call.reply()
            reply?.append(flag?.isEnabled ?? fallback)
            return reply
        case "GetAll":
            return getAll(call)
        case "Explain":
            guard let key = call.readString() else { return invalid(call) }
            let result = controller.explain(key: key, snapshot: snapshot, subscriptions: 0)
            return jsonReply(call, result)
        case "GetStatus":
            let result = controller.status(snapshot: snapshot, connections: 0, subscriptions: 0)
            return jsonReply(call, result)
        default:
            return control(member, call, peer)
        }
    }

    /// About how many bytes the answer to `call` of `peer`'s will be, when that is more than a few: the
    /// whole set for `GetAll`, one flag for `Get` (its properties and its JSON text); 0 for every other call,
    /// and for a caller who may not read.
    func answerSize(of call: BusMessage, from peer: BusPeer) -> Int {
        guard access.mayRead(peer) else { return 0 }
        switch call.member {
        case "GetAll":
            return 2 * snapshot.encodedList.count
        case "Get":
            defer { call.rewind() }
            guard let key = call.readString() else { return 0 }
            return 2 * (snapshot.encoded[FlagKey(key)]?.count ?? 0)
        default:
            return 0
        }
    }

    /// The control calls: access checked as on the socket (`ControlGroups`), then carried out by the
    /// controller off this thread.
    private func control(_ member: String, _ call: BusMessage, _ peer: BusPeer) -> BusMessage? {
        let controller = self.controller
        let operation: @Sendable () async -> BusReply
        switch member {
        case "Refresh":
            operation = {
                switch await controller.refresh() {
                case .success(let listing):
                    .refresh(succeeded: true, fromNetwork: listing.fromNetwork ?? false, status: 200, reason: "")
                case .failure(let error):
                    .refresh(
                        succeeded: false, fromNetwork: false, status: error.data?["status"]?.integerValue ?? 0,
                        reason: error.message)
                }
            }
        case "LogImpression":
            guard let key = call.readString() else { return invalid(call) }
            operation = {
                let result = await controller.logImpression(key: key)
                if case .failed(let status) = result { return .impression(outcome: result.outcome, status: status) }
                return .impression(outcome: result.outcome, status: 0)
            }
        case "SetUserId":
            // A caller outside ControlGroups is told so whatever it sent; a refused call takes nothing of the rate.
            guard let userId = call.readString() else {
                let permitted = controller.policy.mayControl(peer.caller)
                return permitted ? invalid(call) : refusal(of: .setUserId(""), call, peer)
            }
            if let refused = refusal(of: .setUserId(userId), call, peer) { return refused }
            operation = {
                switch await controller.setUserId(userId) {
                case .success(let result): .userId(result.userId, heldUntil: result.heldUntil ?? "")
                case .failure(let error): .failure(error)
                }
            }
        case "SetAppState":
            guard let text = call.readString(), let state = Call.AppState(rawValue: text) else {
                let permitted = controller.policy.mayControl(peer.caller)
                return permitted ? invalid(call) : refusal(of: .setAppState(.foreground), call, peer)
            }
            if let refused = refusal(of: .setAppState(state), call, peer) { return refused }
            operation = { .sessionStarted(await controller.setAppState(state).sessionStarted) }
        default:
            return call.errorReply(
                name: "org.freedesktop.DBus.Error.UnknownMethod", text: "unknown method \(member)")
        }
        guard dispatch(call, peer, operation) else {
            return call.errorReply(
                name: Self.limitsExceeded, text: "too many calls in flight: wait for the answers to those made")
        }
        return nil
    }

    private func get(_ key: String, _ call: BusMessage) -> BusMessage? {
        let flagKey = FlagKey(key)
        let reply = call.reply()
        let found = snapshot.flags[flagKey]
        controller.evaluations.evaluated(key, flag: found, revision: snapshot.revision)
        guard let flag = found else {
            reply?.append(false)
            reply?.append(false)
            reply?.append("")
            reply?.appendDictionary([:])
            reply?.append("")
            return reply
        }
        reply?.append(true)
        reply?.append(flag.isEnabled)
        reply?.append(flag.ruleId)
        reply?.appendDictionary(flag.properties)
        reply?.append(utf8: snapshot.encoded[flagKey] ?? [])
        return reply
    }

    private func getAll(_ call: BusMessage) -> BusMessage? {
        let reply = call.reply()
        reply?.append(snapshot.epoch)
        reply?.append(UInt64(snapshot.revision))
        reply?.appendFlags(snapshot.flags.sorted, encoded: snapshot.encoded)
        return reply
    }

    /// The `Changed` signal of `update`: the revision, the changed flags, the removed keys.
    func changedSignal(_ update: FlagUpdate, on connection: BusConnection) -> BusMessage? {
        guard let signal = connection.signal(path: Self.path, interface: Self.interface, member: "Changed") else {
            return nil
        }
        signal.append(UInt64(update.snapshot.revision))
        signal.appendFlags(update.diff.changed, encoded: update.snapshot.encoded)
        signal.container("a", "s") { for key in update.diff.removed { signal.append(key) } }
        return signal
    }

    /// A property read: the value written into `reply`; false for an unknown property.
    func read(property: String, into reply: BusMessage) -> Bool {
        switch property {
        case "Revision": reply.append(UInt64(snapshot.revision))
        case "Epoch": reply.append(snapshot.epoch)
        case "Source":
            reply.append(controller.status(snapshot: snapshot, connections: 0, subscriptions: 0).source)
        case "ExpiresAt": reply.append(controller.expiresAt().stringValue ?? "")
        case "Status": reply.append(statusLine())
        default: return false
        }
        return true
    }

    private func jsonReply(_ call: BusMessage, _ result: any CallResult) -> BusMessage? {
        var bytes: [UInt8] = []
        result.write(to: &bytes)
        let reply = call.reply()
        reply?.append(utf8: bytes)
        return reply
    }

    private func invalid(_ call: BusMessage) -> BusMessage? {
        call.errorReply(name: Self.invalidArgs, text: "invalid arguments")
    }

    /// The flag service's policy on `typed`, `call` of `peer`'s: nil when it may go, else the error reply
    /// (`AccessDenied` for a caller outside `ControlGroups`, `LimitsExceeded` past the state-write rate).
    private func refusal(of typed: Call, _ call: BusMessage, _ peer: BusPeer) -> BusMessage? {
        guard let refusal = controller.policy.refusal(of: typed, from: peer.caller) else { return nil }
        guard refusal.code == RPCError.notPermittedCode else {
            return call.errorReply(name: Self.limitsExceeded, text: refusal.message)
        }
        // Named as the bus names the method.
        let text = RPCError.notPermitted(call.member ?? typed.method).message
        return call.errorReply(name: Self.accessDenied, text: text)
    }
}

extension BusMessage {
    /// `a(sbsa{sv}s)`: each flag as key, enabled, ruleId, properties and its exact JSON text.
    func appendFlags(_ flags: [Flag], encoded: [FlagKey: [UInt8]]) {
        container("a", "(sbsa{sv}s)") {
            for flag in flags {
                container("r", "sbsa{sv}s") {
                    append(flag.key)
                    append(flag.isEnabled)
                    append(flag.ruleId)
                    appendDictionary(flag.properties)
                    append(utf8: encoded[FlagKey(flag.key)] ?? [])
                }
            }
        }
    }
}
