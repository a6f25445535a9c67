import CSystemd
import FlagsCore
import FlagsProtocol
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's object on the bus: answers the interface's calls and property reads, and writes the `Changed`
/// signal. Runs on the bus thread only (sd-bus calls its handlers from `sd_bus_process`).
///
/// Reads answer from the store's current snapshot at once; the control calls leave the thread for the
/// controller and their replies come back through `BusLoop`'s inbox, like the socket server's.
final class BusObject {
    static let path = "/io/github/pwflagsd/Flags1"
    static let interface = "io.github.pwflagsd.Flags1"
    static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"

    private let store: FlagStore
    private let controller: DaemonController
    private let access: BusAccess
    /// The bound on `SetUserId` calls of users other than root and the daemon's (`StateWriteRate`).
    private var writeRate = StateWriteRate()
    /// The `STATUS=` line, for the `Status` property.
    private let statusLine: () -> String
    /// Hands a control call of a caller's to the async side, whose reply comes back on the bus thread; false
    /// when the caller already has as many calls in flight as it may (`BusLoop`).
    private let dispatch: Dispatch

    typealias Dispatch = (BusMessage, BusPeer, @escaping @Sendable () async -> BusReply) -> Bool

    init(
        store: FlagStore, controller: DaemonController, access: BusAccess, statusLine: @escaping () -> String,
        dispatch: @escaping Dispatch
    ) {
        self.store = store
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
            let flag = store.current.flags[FlagKey(key)]
            let reply = call.reply()
            reply?.append(flag?.isEnabled ?? fallback)
            return reply
        case "GetAll":
            return getAll(call)
        case "Explain":
            guard let key = call.readString() else { return invalid(call) }
            let snapshot = store.current
            let result = controller.explain(key: key, snapshot: snapshot, subscriptions: 0)
            return jsonReply(call, result)
        case "GetStatus":
            let result = controller.status(snapshot: store.current, connections: 0, subscriptions: 0)
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
            return 2 * store.current.encodedList.count
        case "Get":
            defer { call.rewind() }
            guard let key = call.readString() else { return 0 }
            return 2 * (store.current.encoded[FlagKey(key)]?.count ?? 0)
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
                case .success(let result):
                    .refresh(
                        succeeded: true, fromNetwork: (result as? FlagListing)?.fromNetwork ?? false, status: 200,
                        reason: "")
                case .failure(let error):
                    .refresh(
                        succeeded: false, fromNetwork: false, status: error.data?["status"]?.integerValue ?? 0,
                        reason: error.message)
                }
            }
        case "LogImpression":
            guard let key = call.readString() else { return invalid(call) }
            operation = {
                switch await controller.logImpression(key: key) {
                case .success(let result as LogImpressionResult):
                    if case .failed(let status) = result {
                        .impression(outcome: result.outcome, status: status)
                    } else {
                        .impression(outcome: result.outcome, status: 0)
                    }
                case .success: .impression(outcome: "failed", status: 0)
                case .failure(let error): .failure(error)
                }
            }
        case "SetUserId":
            guard access.mayControl(peer) else { return denied(call, member) }
            guard let userId = call.readString() else { return invalid(call) }
            // The socket's bound on state writes, per user (the bus keeps its own buckets): a member looping on
            // the bus would wear the flash as much as one looping on the socket.
            if !access.isPrivileged(peer), let refusal = writeRate.refusal(uid: peer.uid, now: MonotonicClock.seconds())
            {
                return call.errorReply(name: Self.limitsExceeded, text: refusal.message)
            }
            operation = {
                switch await controller.setUserId(userId) {
                case .success(let result as SetUserIdResult): .userId(result.userId, heldUntil: result.heldUntil ?? "")
                case .success: .userId(userId, heldUntil: "")
                case .failure(let error): .failure(error)
                }
            }
        case "SetAppState":
            guard access.mayControl(peer) else { return denied(call, member) }
            guard let text = call.readString(), let state = Call.AppState(rawValue: text) else { return invalid(call) }
            operation = {
                switch await controller.setAppState(state) {
                case .success(let result as SetAppStateResult): .sessionStarted(result.sessionStarted)
                case .success: .sessionStarted(false)
                case .failure(let error): .failure(error)
                }
            }
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
        let snapshot = store.current
        let flagKey = FlagKey(key)
        let reply = call.reply()
        guard let flag = snapshot.flags[flagKey] else {
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
        let snapshot = store.current
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
        let snapshot = store.current
        switch property {
        case "Revision": reply.append(UInt64(snapshot.revision))
        case "Epoch": reply.append(snapshot.epoch)
        case "Source":
            reply.append(controller.status(snapshot: snapshot, connections: 0, subscriptions: 0).source)
        case "ExpiresAt": reply.append(store.expiry.json.stringValue ?? "")
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

    private func denied(_ call: BusMessage, _ member: String) -> BusMessage? {
        call.errorReply(name: Self.accessDenied, text: "not permitted: \(member) is limited to ControlGroups")
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
