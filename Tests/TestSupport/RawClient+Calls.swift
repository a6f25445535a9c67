public import FlagsCore

extension RawClient {
    /// Sends a JSON-RPC request and returns the next response line, skipping notifications; nil when none came.
    ///
    /// Notifications read while waiting are dropped: tests that watch notifications use a connection of their own.
    public func call(
        _ method: String,
        _ params: JSONValue? = nil,
        id: JSONValue = 1,
        timeout: Duration = .seconds(10)
    ) throws -> JSONValue? {
        var request: [String: JSONValue] = ["jsonrpc": "2.0", "id": id, "method": .string(method)]
        if let params { request["params"] = params }
        try send(line: JSONValue.object(request).serialized())
        return readResponse(timeout: timeout)
    }

    /// The next line that is not a notification, parsed; nil when the connection closed or `timeout` passed.
    public func readResponse(timeout: Duration = .seconds(10)) -> JSONValue? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero, let value = readJSON(timeout: remaining) else { return nil }
            if value["method"] == nil { return value }
        }
    }

    /// The next `flagsChanged` params; nil when none came within `timeout`.
    public func readNotification(timeout: Duration = .seconds(10)) -> JSONValue? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero, let value = readJSON(timeout: remaining) else { return nil }
            if value["method"] == "flagsChanged" { return value["params"] }
        }
    }
}
