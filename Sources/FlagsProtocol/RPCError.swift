public import FlagsCore

/// A JSON-RPC error as docs/protocol.md lists them: a code programs branch on, a message for
/// people, optional data.
public struct RPCError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: Int
    public var message: String
    public var data: JSONValue?

    public init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    public var description: String { "\(message) (\(code))" }

    public static let parseErrorCode = -32700
    public static let invalidRequestCode = -32600
    public static let methodNotFoundCode = -32601
    public static let invalidParamsCode = -32602
    public static let internalErrorCode = -32603
    public static let refreshFailedCode = -32000
    public static let notPermittedCode = -32001
    public static let tooManySubscriptionsCode = -32002
    public static let tooManyListenKeysCode = -32003
    public static let tooManyStateChangesCode = -32004
    public static let notDurableCode = -32005

    /// The line is not JSON.
    public static func parseError(_ detail: String) -> RPCError {
        RPCError(code: parseErrorCode, message: "parse error: \(detail)")
    }

    /// The line is JSON but not a request object.
    public static func invalidRequest(_ detail: String) -> RPCError {
        RPCError(code: invalidRequestCode, message: "invalid request: \(detail)")
    }

    /// The line is longer than `MaxLineBytes`; the connection is closed after this answer.
    public static func lineTooLong(limit: Int) -> RPCError {
        RPCError(
            code: invalidRequestCode, message: "line too long (limit \(limit) bytes)",
            data: ["limit": .number(Double(limit))])
    }

    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: methodNotFoundCode, message: "method not found: \(method)", data: ["method": .string(method)])
    }

    /// A missing or mistyped parameter; `data.param` names it.
    public static func invalidParams(_ param: String, _ detail: String) -> RPCError {
        RPCError(
            code: invalidParamsCode, message: "invalid params: \(param) \(detail)", data: ["param": .string(param)])
    }

    public static func internalError(_ detail: String) -> RPCError {
        RPCError(code: internalErrorCode, message: "internal error: \(detail)")
    }

    /// A failed refresh with its R11 status.
    public static func refreshFailed(status: Int, reason: String) -> RPCError {
        RPCError(
            code: refreshFailedCode,
            message: "refresh failed: \(reason)",
            data: ["domain": .string(errorDomain), "status": .number(Double(status))]
        )
    }

    /// A refused call: `method` is for `ControlGroups` members, or (`privileged`) for root and the daemon's user.
    public static func notPermitted(_ method: String, privileged: Bool = false) -> RPCError {
        let who = privileged ? "root and the daemon's user" : "ControlGroups"
        return RPCError(code: notPermittedCode, message: "not permitted: \(method) is limited to \(who)")
    }

    public static func tooManySubscriptions(limit: Int) -> RPCError {
        RPCError(
            code: tooManySubscriptionsCode,
            message: "too many subscriptions (limit \(limit) per connection)",
            data: ["limit": .number(Double(limit))]
        )
    }

    /// A `listen` whose keys would take the connection past `MaxListenKeys`; `data` says the limit, what the
    /// connection's subscriptions hold and what this one asked for (in the same units).
    public static func tooManyListenKeys(limit: Int, held: Int, requested: Int) -> RPCError {
        RPCError(
            code: tooManyListenKeysCode,
            message: "too many listen keys (limit \(limit) per connection, MaxListenKeys)",
            data: [
                "limit": .number(Double(limit)), "held": .number(Double(held)),
                "requested": .number(Double(requested)),
            ]
        )
    }

    /// A call that writes the state directory (`setUserId`, `setOverride`, `clearOverride`) past the rate a peer
    /// user may make them at; nothing changed. `data.retryAfter`: whole seconds until one is taken again.
    public static func tooManyStateChanges(retryAfter: Int) -> RPCError {
        RPCError(
            code: tooManyStateChangesCode,
            message: "too many state changes: try again in \(retryAfter) s",
            data: ["retryAfter": .number(Double(retryAfter))])
    }

    /// A change the state directory cannot keep, where a restart would undo it; nothing changed.
    public static func notDurable(_ detail: String) -> RPCError {
        RPCError(code: notDurableCode, message: detail)
    }

    /// An `unlisten` of a subscription this connection does not hold.
    public static let unknownSubscription = invalidParams("subscription", "is not a subscription of this connection")

    /// A `reload` that found the configuration broken; `data.problems` lists each problem with its file and line.
    public static func invalidConfiguration(problems: [String]) -> RPCError {
        RPCError(
            code: invalidParamsCode, message: "invalid configuration; the running one stays",
            data: ["problems": .array(problems.map(JSONValue.string))])
    }

    /// The problems of an `invalidConfiguration` error, when this is one.
    public var problems: [String]? {
        guard let list = data?["problems"]?.arrayValue else { return nil }
        return list.map { $0.stringValue ?? $0.serialized() }
    }

    /// The error domain of R11, as the Pushwoosh SDKs name it.
    public static let errorDomain = "PWFeatureFlagsErrorDomain"

    /// The R11 status of a refresh failure, when this is one.
    public var refreshStatus: Int? {
        guard code == Self.refreshFailedCode else { return nil }
        return data?["status"]?.integerValue
    }

    /// The error object of a response.
    public var jsonValue: JSONValue {
        var members: [String: JSONValue] = ["code": .number(Double(code)), "message": .string(message)]
        if let data { members["data"] = data }
        return .object(members)
    }

    /// Reads an error object; nil when it does not have a numeric code and a string message.
    public init?(json: JSONValue) {
        guard let code = json["code"]?.integerValue, let message = json["message"]?.stringValue else { return nil }
        self.init(code: code, message: message, data: json["data"])
    }
}
