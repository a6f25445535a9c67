public import FlagsCore

/// A Varlink error reply: its qualified name, which programs branch on, and its parameters. The names of
/// `io.github.pwflagsd.Flags` are declared in its IDL (`VarlinkInterface.description`); the others are
/// `org.varlink.service`'s.
public struct VarlinkError: Error, Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var parameters: [String: JSONValue]

    public init(name: String, parameters: [String: JSONValue] = [:]) {
        self.name = name
        self.parameters = parameters
    }

    public var description: String {
        parameters.isEmpty ? name : "\(name) \(JSONValue.object(parameters).serialized())"
    }

    private static func service(_ name: String) -> String { "org.varlink.service." + name }
    private static func flags(_ name: String) -> String { VarlinkInterface.name + "." + name }

    public static func interfaceNotFound(_ interface: String) -> VarlinkError {
        VarlinkError(name: service("InterfaceNotFound"), parameters: ["interface": .string(interface)])
    }

    public static func methodNotFound(_ method: String) -> VarlinkError {
        VarlinkError(name: service("MethodNotFound"), parameters: ["method": .string(method)])
    }

    public static func invalidParameter(_ parameter: String) -> VarlinkError {
        VarlinkError(name: service("InvalidParameter"), parameters: ["parameter": .string(parameter)])
    }

    /// A method that only streams (`Listen`) called without `more`.
    public static let expectedMore = VarlinkError(name: service("ExpectedMore"))

    public static func permissionDenied(_ method: String) -> VarlinkError {
        VarlinkError(name: flags("PermissionDenied"), parameters: ["method": .string(method)])
    }

    public static func invalidMessage(_ reason: String) -> VarlinkError {
        VarlinkError(name: flags("InvalidMessage"), parameters: ["reason": .string(reason)])
    }

    /// The last reply of a `Listen` whose connection sent another call.
    public static let listenInterrupted = VarlinkError(name: flags("ListenInterrupted"))

    public static func messageTooLong(limit: Int) -> VarlinkError {
        VarlinkError(name: flags("MessageTooLong"), parameters: ["limit": .number(Double(limit))])
    }

    /// The line protocol's error as Varlink's (docs/varlink.md, Errors), for `method` (the Varlink name).
    public init(_ error: RPCError, method: String) {
        let data = error.data?.objectValue ?? [:]
        func number(_ name: String) -> JSONValue { data[name] ?? .number(0) }
        switch error.code {
        case RPCError.invalidParamsCode:
            self = .invalidParameter(data["param"]?.stringValue ?? "parameters")
        case RPCError.methodNotFoundCode:
            self = .methodNotFound(method)
        case RPCError.notPermittedCode:
            self = .permissionDenied(method)
        case RPCError.refreshFailedCode:
            let reason =
                error.message.hasPrefix("refresh failed: ") ? String(error.message.dropFirst(16)) : error.message
            self.init(
                name: Self.flags("RefreshFailed"), parameters: ["status": number("status"), "reason": .string(reason)])
        case RPCError.tooManyListenKeysCode:
            self.init(
                name: Self.flags("TooManyListenKeys"),
                parameters: ["limit": number("limit"), "held": number("held"), "requested": number("requested")])
        case RPCError.tooManyStateChangesCode:
            self.init(name: Self.flags("TooManyStateChanges"), parameters: ["retryAfter": number("retryAfter")])
        case RPCError.notDurableCode:
            self.init(name: Self.flags("NotDurable"), parameters: ["reason": .string(error.message)])
        default:
            self = .invalidMessage(error.message)
        }
    }
}
