public import FlagsCore
public import FlagsProtocol
import Foundation
import Synchronization
public import UnixIO

/// Carries out the methods that may wait, and knows what `status` reports.
public final class DaemonController: RequestHandler {
    private let configuration: Configuration
    private let hwid: String
    private let store: FlagStore
    private let local: LocalFlagSource?
    private let stateDirectory: StateDirectory
    private let logger: Logger
    private let state: Mutex<State>

    private struct State {
        var userId: String
        var appState: Call.AppState
        var sessionStartedAt: Date?
    }

    /// The state-directory file that keeps a user id set over the socket across restarts.
    static let userIdFile = "user-id"

    init(
        configuration: Configuration,
        hwid: String,
        store: FlagStore,
        local: LocalFlagSource?,
        stateDirectory: StateDirectory,
        logger: Logger,
        now: Date = Date()
    ) {
        self.configuration = configuration
        self.hwid = hwid
        self.store = store
        self.local = local
        self.stateDirectory = stateDirectory
        self.logger = logger
        let savedUserId = stateDirectory.read(Self.userIdFile).map { String(decoding: $0, as: UTF8.self) }
        let userId = savedUserId.flatMap { $0.isEmpty ? nil : $0 } ?? configuration.userID ?? hwid
        let foreground = configuration.lifecycle == .foreground
        self.state = Mutex(State(userId: userId, appState: foreground ? .foreground : .background, sessionStartedAt: foreground ? now : nil))
    }

    public func statusFields() -> [String: JSONValue] {
        let state = self.state.withLock { $0 }
        let isLocal = configuration.usesLocalSource
        return [
            "version": .string(PWFlagsVersion.current),
            "applicationCode": isLocal ? .null : .string(configuration.applicationCode),
            "source": .string(isLocal ? "file" : "pushwoosh"),
            "hwid": .string(hwid),
            "userId": .string(state.userId),
            "fetchedAt": local?.loadedAt.map { .string(Self.timestamp($0)) } ?? .null,
            "stale": .bool(false),
            "partial": .bool(false),
            "lastError": .null,
            "nextRefreshAt": .null,
            "appState": .string(state.appState.rawValue),
            "sessionStartedAt": state.sessionStartedAt.map { .string(Self.timestamp($0)) } ?? .null,
            "problem": local?.problem.map(JSONValue.string) ?? .null,
        ]
    }

    public func perform(_ call: Call, peer: PeerCredentials) async -> Result<JSONValue, RPCError> {
        switch call {
        case .refresh:
            return refresh()
        case .setUserId(let requested):
            return setUserId(requested)
        case .setAppState(let appState):
            let started = state.withLock { state -> Bool in
                defer { state.appState = appState }
                guard configuration.lifecycle == .client, appState == .foreground, state.appState == .background else { return false }
                state.sessionStartedAt = Date()
                return true
            }
            return .success(["sessionStarted": .bool(started)])
        case .pushRegistered:
            return .success(["refreshStarted": .bool(false)])
        case .logImpression(let key):
            guard let flag = store.current.flags[key] else { return .success(["outcome": "noFlag"]) }
            logger.info(
                "feature flag impression",
                ["PWFLAGS_EVENT": "impression", "FLAG_KEY": flag.key, "RULE_ID": flag.ruleId, "ENABLED": String(flag.isEnabled)]
            )
            return .success(["outcome": "logged"])
        case .reload:
            return .failure(.internalError("reload is not available yet"))
        case .get, .getAll, .isEnabled, .listen, .unlisten, .status:
            return .failure(.internalError("\(call.method) is answered by the socket server"))
        }
    }

    private func refresh() -> Result<JSONValue, RPCError> {
        guard let local else { return .failure(.refreshFailed(status: 0, reason: "no flag source")) }
        if case .failure(let error) = local.load() {
            return .failure(.refreshFailed(status: 0, reason: error.reason))
        }
        let snapshot = store.current
        return .success([
            "revision": .number(Double(snapshot.revision)),
            "flags": .array(snapshot.flags.sorted.map(\.wireValue)),
            "fromNetwork": false,
        ])
    }

    private func setUserId(_ requested: String) -> Result<JSONValue, RPCError> {
        let userId = requested.isEmpty ? (configuration.userID ?? hwid) : requested
        state.withLock { $0.userId = userId }
        do {
            if requested.isEmpty {
                try stateDirectory.remove(Self.userIdFile)
            } else {
                try stateDirectory.writeAtomically(Self.userIdFile, Array(requested.utf8))
            }
        } catch {
            logger.warning("cannot keep the user id in the state directory: \(error)")
        }
        return .success(["userId": .string(userId)])
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
