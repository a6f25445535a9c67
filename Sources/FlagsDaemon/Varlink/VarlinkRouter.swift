import FlagsCore
import FlagsProtocol
import UnixIO

/// Turns each Varlink call into its reply: `org.varlink.service`'s introspection, and the methods of
/// `io.github.pwflagsd.Flags`, each decoded into the `Call` it carries out and judged by the flag service's policy
/// (`CallPolicy`), as the line socket's are.
///
/// Reads are answered at once from the loop's snapshot; the methods that may wait leave as `Work` for the async
/// side (`FlagService`). Owned by the event loop's thread.
final class VarlinkRouter {
    /// A call handed to the async side because it may wait.
    struct Work: OffLoopCall {
        let connection: ConnectionKey
        /// The Varlink method's qualified name, for its error replies.
        let method: String
        /// No reply is wanted.
        let oneway: Bool
        let perform: @Sendable () async -> Result<any CallResult, RPCError>
    }

    private let controller: FlagService
    private let logger: Logger
    private let submit: @Sendable (Work) -> Void
    private var badMessages = LogThrottle()
    /// `Listen` calls streaming now, for `GetStatus` and `Explain`, and the fan-out of each change to them.
    private(set) var listeners = Listeners()

    init(controller: FlagService, logger: Logger, submit: @escaping @Sendable (Work) -> Void) {
        self.controller = controller
        self.logger = logger
        self.submit = submit
    }

    /// Answers one message on `connection`, or hands its call to the async side (then the connection is busy).
    func route(
        _ message: ArraySlice<UInt8>, on connection: VarlinkConnection, snapshot: FlagSnapshot,
        limits: ServerLimits, openConnections: Int
    ) {
        // The commonest call, in the shape clients send it, is answered without building a JSON tree.
        if let key = FastRequest.varlinkGetKey(message) {
            return writeGet(key, of: snapshot, on: connection)
        }
        let call: VarlinkCall
        switch VarlinkCall.decode(message) {
        case .failure(let error):
            noteBadMessage(error, on: connection)
            VarlinkReply.write(error, to: &connection.output.bytes)
            return
        case .success(let decoded):
            call = decoded
        }
        let reply = !call.oneway
        func fail(_ error: VarlinkError) {
            if reply { VarlinkReply.write(error, to: &connection.output.bytes) }
        }
        guard !call.upgrade else { return fail(.invalidParameter("upgrade")) }
        switch call.interface {
        case VarlinkInterface.serviceName:
            return answerService(call, on: connection)
        case VarlinkInterface.name:
            break
        default:
            return fail(.interfaceNotFound(call.interface))
        }
        guard let method = VarlinkInterface.Method(rawValue: call.member) else {
            return fail(.methodNotFound(call.method))
        }
        let typed: Call
        do {
            typed = try Call(method: method.lineMethod, params: call.parameters)
        } catch {
            return fail(VarlinkError(error, method: call.method))
        }
        if CallPolicy.applies(to: typed), let refusal = controller.policy.refusal(of: typed, from: connection.caller) {
            return fail(VarlinkError(refusal, method: call.method))
        }
        let controller = self.controller
        switch typed {
        case .get(let key):
            guard reply else { return }
            writeGet(key, of: snapshot, on: connection)
        case .getAll:
            guard reply else { return }
            VarlinkReply.writePrefix(continues: false, to: &connection.output.bytes)
            connection.output.bytes.append(contentsOf: snapshot.listingHead)
            snapshot.writeFlags(of: nil, to: &connection.output)
            connection.output.bytes.append(UInt8(ascii: "}"))
            VarlinkReply.writeSuffix(to: &connection.output.bytes)
        case .listen(let keys, let since):
            guard call.more, reply else { return fail(.expectedMore) }
            listen(connection, keys: keys, since: since, limits: limits, snapshot: snapshot, method: call.method)
        case .status:
            guard reply else { return }
            let status = controller.status(
                snapshot: snapshot, connections: openConnections, subscriptions: listeners.count)
            VarlinkReply.write(status, to: &connection.output.bytes)
        case .explain(let key):
            guard reply else { return }
            let hearing = listeners.count(forKey: FlagKey(key))
            let result = controller.explain(key: key, snapshot: snapshot, subscriptions: hearing)
            VarlinkReply.write(result, to: &connection.output.bytes)
        case .refresh:
            hand(connection, call) { await controller.refresh() }
        case .logImpression(let key):
            hand(connection, call) { .success(await controller.logImpression(key: key)) }
        case .setUserId(let requested):
            hand(connection, call) { await controller.setUserId(requested) }
        case .setAppState(let appState):
            hand(connection, call) { .success(await controller.setAppState(appState)) }
        default:
            fail(.methodNotFound(call.method))
        }
    }

    /// `org.varlink.service`: `GetInfo` and `GetInterfaceDescription`.
    private func answerService(_ call: VarlinkCall, on connection: VarlinkConnection) {
        guard !call.oneway else { return }
        let output = { (parameters: JSONValue) in
            VarlinkReply.write(parameters: parameters, to: &connection.output.bytes)
        }
        switch call.member {
        case "GetInfo":
            output(VarlinkInterface.info(version: PWFlagsVersion.current))
        case "GetInterfaceDescription":
            guard let interface = call.parameters["interface"]?.stringValue else {
                return VarlinkReply.write(.invalidParameter("interface"), to: &connection.output.bytes)
            }
            guard let description = VarlinkInterface.description(of: interface) else {
                return VarlinkReply.write(.interfaceNotFound(interface), to: &connection.output.bytes)
            }
            output(["description": .string(description)])
        default:
            VarlinkReply.write(.methodNotFound(call.method), to: &connection.output.bytes)
        }
    }

    /// Starts streaming `Listen` on the connection within `MaxListenKeys`, and writes its first reply: the flags
    /// of its keys, or "unchanged" when `since` is where the daemon stands (the line socket's `listen` rules).
    private func listen(
        _ connection: VarlinkConnection, keys: [String]?, since: StreamPosition?, limits: ServerLimits,
        snapshot: FlagSnapshot, method: String
    ) {
        let wanted = keys.map { Set($0.map { FlagKey($0) }) }
        // A call on a streaming connection ends its Listen first, so a connection never holds more than this one.
        if let refusal = ListenBounds.open(wanted, on: connection, listens: 0, limits: limits) {
            return VarlinkReply.write(VarlinkError(refusal, method: method), to: &connection.output.bytes)
        }
        connection.listen = VarlinkConnection.Listen(keys: wanted)
        listeners.opened(wanted)
        var head: JSONValue = [
            "epoch": .string(snapshot.epoch), "revision": .number(Double(snapshot.revision)),
            "expiresAt": controller.expiresAt(),
        ]
        let unchanged = since == StreamPosition(epoch: snapshot.epoch, revision: snapshot.revision)
        if unchanged { head = .object((head.objectValue ?? [:]).merging(["unchanged": true]) { $1 }) }
        var bytes: [UInt8] = []
        head.write(to: &bytes)
        bytes.removeLast()
        VarlinkReply.writePrefix(continues: true, to: &connection.output.bytes)
        connection.output.bytes.append(contentsOf: bytes)
        if !unchanged {
            connection.output.bytes.append(contentsOf: #","flags":"#.utf8)
            snapshot.writeFlags(of: wanted, to: &connection.output)
        }
        connection.output.bytes.append(UInt8(ascii: "}"))
        VarlinkReply.writeSuffix(to: &connection.output.bytes)
    }

    /// A connection whose `Listen` streamed closed.
    func ended(_ listen: VarlinkConnection.Listen) {
        listeners.closed(listen.keys)
    }

    /// The `flags` array of `keys` (nil: every flag, the snapshot's shared encoding queued by reference).
    /// `Get`'s reply: `{"parameters":{"flag":…}}`, the flag as the snapshot encoded it, or null.
    private func writeGet(_ key: String, of snapshot: FlagSnapshot, on connection: VarlinkConnection) {
        controller.evaluations.evaluated(key, in: snapshot)
        VarlinkReply.writePrefix(continues: false, to: &connection.output.bytes)
        GetResult.write(encodedFlag: snapshot.encoded[FlagKey(key)], to: &connection.output.bytes)
        VarlinkReply.writeSuffix(to: &connection.output.bytes)
    }

    /// Hands a method that may wait to the async side; the connection's later calls wait for its reply.
    private func hand<Answer: CallResult>(
        _ connection: VarlinkConnection, _ call: VarlinkCall,
        _ perform: @escaping @Sendable () async -> Result<Answer, RPCError>
    ) {
        connection.busy = true
        submit(
            Work(connection: connection.key, method: call.method, oneway: call.oneway) {
                await perform().map { $0 as any CallResult }
            })
    }

    /// Logs messages that are not calls at most once a second: a client that has a bug, not an attack to trace.
    private func noteBadMessage(_ error: VarlinkError, on connection: VarlinkConnection) {
        guard let count = badMessages.record(now: EngineClock.now()) else { return }
        logger.notice(
            "Varlink: answered messages that are not calls",
            [
                "PEER_PID": String(connection.peer.pid), "MESSAGES": String(count),
                "REASON": error.parameters["reason"]?.stringValue ?? error.name,
            ])
    }
}
