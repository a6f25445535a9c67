public import FlagsCore

/// A line the daemon sent, as a client reads it.
public enum IncomingMessage: Sendable, Equatable {
    case response(id: JSONValue, result: Result<JSONValue, RPCError>)
    case notification(method: String, params: JSONValue)

    /// Reads one line; nil when it is neither a response nor a notification.
    public init?(line: some Collection<UInt8>) {
        guard let value = try? JSONValue(parsing: Array(line)), value.objectValue != nil else { return nil }
        if let method = value["method"]?.stringValue {
            self = .notification(method: method, params: value["params"] ?? .object([:]))
            return
        }
        guard let id = value["id"] else { return nil }
        if let errorValue = value["error"] {
            guard let error = RPCError(json: errorValue) else { return nil }
            self = .response(id: id, result: .failure(error))
        } else if let result = value["result"] {
            self = .response(id: id, result: .success(result))
        } else {
            return nil
        }
    }
}
