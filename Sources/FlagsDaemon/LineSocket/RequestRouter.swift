import FlagsCore
import FlagsProtocol
import UnixIO

/// The line protocol's codec: decodes each request line once (the fast scanner, else the general decoder) into
/// a `Call`, asks the flag service's policy whether the peer may make it, and switches on the `Call` once.
///
/// Reads of the flag set are answered at once from the loop's snapshot; the methods that may wait (the network,
/// the disk) leave as `Work` for the async side, which carries them out through `FlagService`. Owned by the
/// event loop's thread, as the connections are.
final class RequestRouter {
    /// A request handed to the async side because it may wait.
    struct Work: OffLoopCall {
        let connection: ConnectionKey
        /// The id as the request sent it, owning its bytes.
        let requestID: RequestID?
        let perform: @Sendable () async -> Result<any CallResult, RPCError>
    }

    private let controller: FlagService
    private let subscriptions: SubscriptionTable
    /// Requests and errors, counted on this thread.
    let metrics: ServerMetrics
    private let submit: @Sendable (Work) -> Void

    init(
        controller: FlagService, subscriptions: SubscriptionTable, metrics: ServerMetrics = ServerMetrics(),
        submit: @escaping @Sendable (Work) -> Void
    ) {
        self.metrics = metrics
        self.controller = controller
        self.subscriptions = subscriptions
        self.submit = submit
    }

    /// Answers one request line on `connection`, or hands it to the async side (then the connection is busy).
    /// `openConnections` and `surfaces` are the counts `status` and `metrics` report.
    func route(
        _ line: ArraySlice<UInt8>, on connection: LineConnection, snapshot: FlagSnapshot, limits: ServerLimits,
        openConnections: Int, surfaces: () -> [SurfaceGauge] = { [] }
    ) {
        if let fast = FastRequest.scan(line) {
            answer(fast, on: connection, snapshot: snapshot)
            return
        }
        let request: Request
        switch Request.decode(line) {
        case .failure(let failure):
            if let id = RequestID(echoing: failure.id, in: line) {
                metrics.error(failure.error)
                Message.writeError(id: id, error: failure.error, to: &connection.output.bytes)
            }
            return
        case .success(let decoded):
            request = decoded
        }
        // The id's text as sent, not the parsed number printed back (9007199254740993 is not a Double).
        let requestID = RequestID(echoing: request.id, in: line)
        let call: Call
        do {
            call = try Call(method: request.method, params: request.params)
        } catch {
            if let id = requestID {
                metrics.error(error)
                Message.writeError(id: id, error: error, to: &connection.output.bytes)
            }
            return
        }
        // `get` and `isEnabled` are counted where the fast scanner's are, in `answer`.
        switch call {
        case .get, .isEnabled: break
        default: metrics.request(call)
        }
        if CallPolicy.applies(to: call), let refusal = controller.policy.refusal(of: call, from: connection.caller) {
            if let id = requestID {
                metrics.error(refusal)
                Message.writeError(id: id, error: refusal, to: &connection.output.bytes)
            }
            return
        }
        let controller = self.controller
        switch call {
        case .get(let key):
            guard let id = requestID else { return }
            answer(.get(id: id.text, key: key), on: connection, snapshot: snapshot)
        case .isEnabled(let key, let fallback):
            guard let id = requestID else { return }
            answer(.isEnabled(id: id.text, key: key, default: fallback), on: connection, snapshot: snapshot)
        case .getAll:
            guard let id = requestID else { return }
            connection.writeListing(id: id, subscription: nil, snapshot: snapshot)
        case .listen(let keys, let since):
            subscriptions.listen(
                connection, keys: keys, since: since, requestID: requestID, limits: limits, snapshot: snapshot,
                expiresAt: controller.expiresAt)
        case .unlisten(let subscription):
            subscriptions.unlisten(connection, subscription: subscription, requestID: requestID)
        case .status:
            guard let id = requestID else { return }
            let status = controller.status(
                snapshot: snapshot, connections: openConnections, subscriptions: subscriptions.count)
            Message.writeResult(id: id, result: status, to: &connection.output.bytes)
        case .refresh:
            hand(connection, requestID) { await controller.refresh() }
        case .logImpression(let key):
            hand(connection, requestID) { .success(await controller.logImpression(key: key)) }
        case .setUserId(let requested):
            hand(connection, requestID) { await controller.setUserId(requested) }
        case .setAppState(let appState):
            hand(connection, requestID) { .success(await controller.setAppState(appState)) }
        case .pushRegistered:
            hand(connection, requestID) { .success(await controller.pushRegistered()) }
        case .reload:
            hand(connection, requestID) { await controller.reload() }
        case .explain(let key):
            guard let id = requestID else { return }
            let result = controller.explain(
                key: key, snapshot: snapshot, subscriptions: subscriptions.count(forKey: key))
            Message.writeResult(id: id, result: result, to: &connection.output.bytes)
        case .metrics(let format):
            guard let id = requestID else { return }
            let text = MetricsExposition.text(
                metricFamilies(snapshot: snapshot, openConnections: openConnections, surfaces: surfaces()),
                format: format)
            Message.writeResult(id: id, result: MetricsResult(text: text), to: &connection.output.bytes)
        case .setOverride(let override):
            hand(connection, requestID) { controller.overrides.set(override) }
        case .clearOverride(let key):
            hand(connection, requestID) { controller.overrides.clear(key) }
        case .listOverrides:
            guard let id = requestID else { return }
            Message.writeResult(id: id, result: controller.overrides.list(), to: &connection.output.bytes)
        }
    }

    /// Answers a request the fast scanner recognised, from the snapshot's encoded flags.
    private func answer(_ request: FastRequest, on connection: LineConnection, snapshot: FlagSnapshot) {
        switch request {
        case .get(let id, let key):
            metrics.fastGets &+= 1
            controller.evaluations.evaluated(key, in: snapshot)
            GetResult.writeLine(id: id, encodedFlag: snapshot.encoded[FlagKey(key)], to: &connection.output.bytes)
        case .isEnabled(let id, let key, let fallback):
            metrics.fastIsEnabled &+= 1
            let flag = snapshot.flags[key]
            controller.evaluations.evaluated(key, flag: flag, revision: snapshot.revision)
            IsEnabledResult.writeLine(
                id: id, enabled: flag?.isEnabled ?? fallback, found: flag != nil, to: &connection.output.bytes)
        case .getAll(let id):
            metrics.fastGetAll &+= 1
            connection.writeListing(id: RequestID(text: id), subscription: nil, snapshot: snapshot)
        }
    }

    /// The `metrics` text: this thread's counters and gauges with the controller's.
    /// The `metrics` families: this thread's counters and gauges with the controller's.
    func metricFamilies(snapshot: FlagSnapshot, openConnections: Int, surfaces: [SurfaceGauge]) -> [MetricFamily] {
        controller.metricFamilies(
            server: metrics, snapshot: snapshot, connections: openConnections, subscriptions: subscriptions.count,
            surfaces: surfaces)
    }

    /// Hands a method that may wait to the async side; the connection's later lines wait for its answer.
    private func hand<Answer: CallResult>(
        _ connection: LineConnection, _ requestID: RequestID?,
        _ perform: @escaping @Sendable () async -> Result<Answer, RPCError>
    ) {
        connection.busy = true
        submit(
            Work(connection: connection.key, requestID: requestID?.detached) {
                await perform().map { $0 as any CallResult }
            })
    }
}
