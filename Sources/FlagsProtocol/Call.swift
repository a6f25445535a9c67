public import FlagsCore

/// Every method of docs/protocol.md with its parameters checked and typed.
public enum Call: Sendable, Equatable {
    case get(key: String)
    case getAll
    case isEnabled(key: String, default: Bool)
    case refresh
    /// `keys` nil: every key. `since`: the position the client last saw; when the daemon is still there, the
    /// reply says "unchanged" instead of listing the flags.
    case listen(keys: [String]?, since: StreamPosition? = nil)
    case unlisten(subscription: String)
    case logImpression(key: String)
    /// An empty user id means back to the HWID.
    case setUserId(String)
    case setAppState(AppState)
    case pushRegistered
    case status
    case reload
    /// Why the flag `key` reads as it does (or why it is absent).
    case explain(key: String)
    /// The daemon's counters as exposition text.
    case metrics(format: MetricsFormat)
    /// Forces a flag on this device (`setOverride`).
    case setOverride(FlagOverride)
    /// `key` nil: every override (`{"all":true}`).
    case clearOverride(key: String?)
    case listOverrides

    /// The app's state as `setAppState` reports it.
    public enum AppState: String, Sendable, Equatable {
        case foreground, background
    }

    /// The methods that change the daemon's state for everyone; limited by `ControlGroups`.
    public var isControl: Bool {
        switch self {
        case .setUserId, .setAppState, .pushRegistered, .setOverride, .clearOverride: true
        default: false
        }
    }

    /// The method's name on the wire.
    public var method: String {
        switch self {
        case .get: "get"
        case .getAll: "getAll"
        case .isEnabled: "isEnabled"
        case .refresh: "refresh"
        case .listen: "listen"
        case .unlisten: "unlisten"
        case .logImpression: "logImpression"
        case .setUserId: "setUserId"
        case .setAppState: "setAppState"
        case .pushRegistered: "pushRegistered"
        case .status: "status"
        case .reload: "reload"
        case .explain: "explain"
        case .metrics: "metrics"
        case .setOverride: "setOverride"
        case .clearOverride: "clearOverride"
        case .listOverrides: "listOverrides"
        }
    }

    /// The params object on the wire.
    public var params: [String: JSONValue] {
        switch self {
        case .get(let key), .logImpression(let key), .explain(let key): ["key": .string(key)]
        case .metrics(let format): ["format": .string(format.rawValue)]
        case .isEnabled(let key, let defaultValue): ["key": .string(key), "default": .bool(defaultValue)]
        case .listen(let keys, let since):
            ["keys": keys.map { .array($0.map(JSONValue.string)) }, "since": since?.jsonValue].compactMapValues { $0 }
        case .unlisten(let subscription): ["subscription": .string(subscription)]
        case .setUserId(let userId): ["userId": .string(userId)]
        case .setAppState(let state): ["state": .string(state.rawValue)]
        case .setOverride(let override): override.wireValue.objectValue ?? [:]
        case .clearOverride(let key): key.map { ["key": .string($0)] } ?? ["all": true]
        case .getAll, .refresh, .pushRegistered, .status, .reload, .listOverrides: [:]
        }
    }

    /// Types a request's method and params, or says which is wrong (-32601, -32602).
    public init(method: String, params: [String: JSONValue]) throws(RPCError) {
        switch method {
        case "get": self = .get(key: try Self.string("key", in: params))
        case "getAll": self = .getAll
        case "isEnabled":
            let fallback: Bool
            switch params["default"] {
            case .none, .null?: fallback = false
            case .bool(let value)?: fallback = value
            case .some: throw RPCError.invalidParams("default", "must be a boolean")
            }
            self = .isEnabled(key: try Self.string("key", in: params), default: fallback)
        case "refresh": self = .refresh
        case "listen":
            self = .listen(keys: try Self.keys(in: params), since: try Self.since(in: params))
        case "unlisten": self = .unlisten(subscription: try Self.string("subscription", in: params))
        case "logImpression": self = .logImpression(key: try Self.string("key", in: params))
        case "setUserId": self = .setUserId(try Self.string("userId", in: params))
        case "setAppState":
            guard let state = AppState(rawValue: try Self.string("state", in: params)) else {
                throw RPCError.invalidParams("state", "must be \"foreground\" or \"background\"")
            }
            self = .setAppState(state)
        case "pushRegistered": self = .pushRegistered
        case "status": self = .status
        case "reload": self = .reload
        case "explain": self = .explain(key: try Self.string("key", in: params))
        case "metrics":
            switch params["format"] {
            case .none, .null?: self = .metrics(format: .openMetrics)
            case .string(let name)?:
                guard let format = MetricsFormat(rawValue: name) else {
                    throw RPCError.invalidParams("format", "must be \"openmetrics\" or \"prometheus\"")
                }
                self = .metrics(format: format)
            case .some: throw RPCError.invalidParams("format", "must be a string")
            }
        case "setOverride": self = .setOverride(try FlagOverride(params: params))
        case "clearOverride": self = .clearOverride(key: try Self.overrideKey(in: params))
        case "listOverrides": self = .listOverrides
        default: throw RPCError.methodNotFound(method)
        }
    }

    /// `clearOverride`'s key, or nil for `{"all":true}`; both, or neither, is a mistake.
    private static func overrideKey(in params: [String: JSONValue]) throws(RPCError) -> String? {
        let all: Bool
        switch params["all"] {
        case .none, .null?: all = false
        case .bool(let value)?: all = value
        case .some: throw RPCError.invalidParams("all", "must be a boolean")
        }
        switch params["key"] {
        case .none, .null?:
            guard all else { throw RPCError.invalidParams("key", "is missing (or say \"all\":true)") }
            return nil
        case .string(let key)?:
            guard !all else { throw RPCError.invalidParams("all", "cannot go with a key") }
            return key
        case .some: throw RPCError.invalidParams("key", "must be a string")
        }
    }

    private static func keys(in params: [String: JSONValue]) throws(RPCError) -> [String]? {
        switch params["keys"] {
        case .none, .null?: return nil
        case .array(let elements)?:
            var keys: [String] = []
            for element in elements {
                guard let key = element.stringValue else {
                    throw RPCError.invalidParams("keys", "must be an array of strings")
                }
                keys.append(key)
            }
            return keys
        case .some: throw RPCError.invalidParams("keys", "must be an array of strings")
        }
    }

    private static func since(in params: [String: JSONValue]) throws(RPCError) -> StreamPosition? {
        switch params["since"] {
        case .none, .null?: return nil
        case .some(let value):
            guard let position = StreamPosition(value) else {
                throw RPCError.invalidParams("since", "must be an object with a string epoch and an integer revision")
            }
            return position
        }
    }

    private static func string(_ name: String, in params: [String: JSONValue]) throws(RPCError) -> String {
        guard let value = params[name] else { throw RPCError.invalidParams(name, "is missing") }
        guard let text = value.stringValue else { throw RPCError.invalidParams(name, "must be a string") }
        return text
    }
}
