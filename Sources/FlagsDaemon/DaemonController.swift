public import FlagsCore
public import FlagsProtocol
import Foundation
public import UnixIO

/// Carries out the methods that may wait, and knows what `status` reports.
public final class DaemonController: RequestHandler {
    private let configuration: Configuration
    private let hwid: String
    private let store: FlagStore
    private let local: LocalFlagSource?
    private let refresher: Refresher
    private let impressions: ImpressionReporter
    private let logger: Logger

    init(
        configuration: Configuration,
        hwid: String,
        store: FlagStore,
        local: LocalFlagSource?,
        refresher: Refresher,
        impressions: ImpressionReporter,
        logger: Logger
    ) {
        self.configuration = configuration
        self.hwid = hwid
        self.store = store
        self.local = local
        self.refresher = refresher
        self.impressions = impressions
        self.logger = logger
    }

    public func statusFields() -> [String: JSONValue] {
        let refresherStatus = refresher.status.withLock { $0 }
        var fields = refresherStatus.fields
        fields["version"] = .string(PWFlagsVersion.current)
        fields["hwid"] = .string(hwid)
        let counts = impressions.counts.withLock { $0 }
        fields["impressions"] = [
            "sent": .number(Double(counts.sent)), "duplicate": .number(Double(counts.duplicate)),
            "failed": .number(Double(counts.failed)),
        ]
        if let local {
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
            fields["applicationCode"] = .string(configuration.applicationCode)
            fields["expiresAt"] = refresherStatus.expiresAt(maxAge: configuration.cacheMaxAge.seconds)
        }
        return fields
    }

    public func perform(_ call: Call, peer: PeerCredentials) async -> Result<JSONValue, RPCError> {
        switch call {
        case .refresh:
            switch await refresher.refresh() {
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
            let userId = await refresher.setUserId(requested)
            return .success(["userId": .string(userId)])
        case .setAppState(let appState):
            let started = await refresher.setAppState(foreground: appState == .foreground)
            return .success(["sessionStarted": .bool(started)])
        case .pushRegistered:
            return .success(["refreshStarted": .bool(await refresher.pushRegistered())])
        case .logImpression(let key):
            switch await impressions.logImpression(key: key) {
            case .sent: return .success(["outcome": "sent"])
            case .duplicate: return .success(["outcome": "duplicate"])
            case .noFlag: return .success(["outcome": "noFlag"])
            case .logged: return .success(["outcome": "logged"])
            case .failed(let status): return .success(["outcome": "failed", "status": .number(Double(status))])
            }
        case .reload:
            return .failure(.internalError("reload is not available yet"))
        case .get, .getAll, .isEnabled, .listen, .unlisten, .status:
            return .failure(.internalError("\(call.method) is answered by the socket server"))
        }
    }
}
