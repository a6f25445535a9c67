public import FlagsCore
public import FlagsProtocol
import Foundation
public import UnixIO

/// Carries out the methods that may wait, and knows what `status` reports.
public final class DaemonController: RequestHandler {
    private let store: FlagStore
    private let reloader: Reloader

    init(store: FlagStore, reloader: Reloader) {
        self.store = store
        self.reloader = reloader
    }

    private var stack: SourceStack { reloader.current.withLock { $0 } }

    public func statusFields() -> [String: JSONValue] {
        let stack = self.stack
        let refresherStatus = stack.refresher.status.withLock { $0 }
        let clock = stack.refresher.clock
        var fields = refresherStatus.fields(clock: clock)
        fields["version"] = .string(PWFlagsVersion.current)
        fields["hwid"] = .string(stack.hwid)
        let counts = stack.impressions.counts.withLock { $0 }
        fields["impressions"] = [
            "sent": .number(Double(counts.sent)), "duplicate": .number(Double(counts.duplicate)),
            "failed": .number(Double(counts.failed)),
        ]
        if let local = stack.local {
            fields["source"] = "file"
            fields["applicationCode"] = .null
            // Edits of the file arrive through inotify, not through the refresher.
            fields["fetchedAt"] = RefresherStatus.timestamp(local.loadedAt?.timeIntervalSince1970)
            fields["nextRefreshAt"] = .null
            fields["problem"] = local.problem.map(JSONValue.string) ?? .null
            // The file is its own cache: its flags never expire.
            fields["expiresAt"] = .null
        } else {
            fields["source"] = "pushwoosh"
            fields["applicationCode"] = .string(stack.configuration.applicationCode)
            fields["expiresAt"] = refresherStatus.expiresAt(maxAge: refresherStatus.cacheMaxAge, clock: clock)
        }
        return fields
    }

    public func perform(_ call: Call, peer: PeerCredentials) async -> Result<JSONValue, RPCError> {
        let stack = self.stack
        switch call {
        case .refresh:
            switch await stack.refresher.refresh() {
            case .success(let fromNetwork):
                let snapshot = store.current
                return .success([
                    "revision": .number(Double(snapshot.revision)),
                    "flags": .array(snapshot.flags.sorted.map(\.wireValue)),
                    "fromNetwork": .bool(fromNetwork),
                ])
            case .failure(let error):
                return .failure(.refreshFailed(status: error.status, reason: error.reason))
            }
        case .setUserId(let requested):
            let userId = await stack.refresher.setUserId(requested)
            return .success(["userId": .string(userId)])
        case .setAppState(let appState):
            let started = await stack.refresher.setAppState(foreground: appState == .foreground)
            return .success(["sessionStarted": .bool(started)])
        case .pushRegistered:
            return .success(["refreshStarted": .bool(await stack.refresher.pushRegistered())])
        case .logImpression(let key):
            switch await stack.impressions.logImpression(key: key) {
            case .sent: return .success(["outcome": "sent"])
            case .duplicate: return .success(["outcome": "duplicate"])
            case .noFlag: return .success(["outcome": "noFlag"])
            case .logged: return .success(["outcome": "logged"])
            case .failed(let status): return .success(["outcome": "failed", "status": .number(Double(status))])
            }
        case .reload:
            switch await reloader.reload() {
            case .success: return .success([:])
            case .failure(let errors):
                return .failure(
                    RPCError(
                        code: RPCError.invalidParamsCode,
                        message: "invalid configuration; the running one stays",
                        data: ["problems": .array(errors.problems.map { .string($0.description) })]
                    )
                )
            }
        case .get, .getAll, .isEnabled, .listen, .unlisten, .status:
            return .failure(.internalError("\(call.method) is answered by the socket server"))
        }
    }
}
