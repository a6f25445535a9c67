public import FlagsCore

/// A JSON-RPC session on the daemon's socket: numbered calls, with `flagsChanged` notifications kept aside.
public final class SocketSession {
    private let client: RawClient
    private var nextID = 0
    private var notifications: [JSONValue] = []

    /// Connects to the daemon at `socketPath`.
    public init(socketPath: String) throws {
        client = try RawClient(socketPath: socketPath)
    }

    /// Sends `method` with `params` and returns the whole response (`result` or `error`); nil on timeout.
    public func call(_ method: String, _ params: JSONValue? = nil, timeout: Duration = .seconds(10)) throws
        -> JSONValue?
    {
        nextID += 1
        let id = nextID
        var request: [String: JSONValue] = ["jsonrpc": "2.0", "id": .number(Double(id)), "method": .string(method)]
        if let params { request["params"] = params }
        try client.send(line: JSONValue.object(request).serialized())
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero, let message = client.readJSON(timeout: remaining) else { return nil }
            if message["id"]?.integerValue == id { return message }
            if message["method"] != nil { notifications.append(message) }
        }
    }

    /// The `result` of `method`; nil when it failed or timed out.
    public func result(_ method: String, _ params: JSONValue? = nil, timeout: Duration = .seconds(10)) throws
        -> JSONValue?
    {
        try call(method, params, timeout: timeout)?["result"]
    }

    /// The flag `get` returns for `key`: `.null` when there is none, nil when the call failed.
    public func get(_ key: String) throws -> JSONValue? {
        try result("get", ["key": .string(key)])?["flag"]
    }

    /// The keys `getAll` returns, in order.
    public func keys() throws -> [String] {
        let flags = try result("getAll")?["flags"]?.arrayValue ?? []
        return flags.compactMap { $0["key"]?.stringValue }
    }

    /// The next notification, kept or read within `timeout`; nil when none came.
    public func nextNotification(timeout: Duration = .seconds(10)) -> JSONValue? {
        if !notifications.isEmpty { return notifications.removeFirst() }
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero, let message = client.readJSON(timeout: remaining) else { return nil }
            if message["method"] != nil { return message }
        }
    }
}
