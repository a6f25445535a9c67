public import FlagsCore

/// One Varlink call as a client sends it: `{"method":"iface.Method","parameters":{…},"more":…,"oneway":…}`.
public struct VarlinkCall: Sendable, Equatable {
    /// The qualified method name, `interface.Method`.
    public var method: String
    public var parameters: [String: JSONValue]
    /// The client takes several replies (`continues`), as `Listen` sends them.
    public var more: Bool
    /// The client wants no reply at all.
    public var oneway: Bool
    /// The client asks to leave Varlink for another protocol on this connection (never granted here).
    public var upgrade: Bool

    public init(
        method: String, parameters: [String: JSONValue] = [:], more: Bool = false, oneway: Bool = false,
        upgrade: Bool = false
    ) {
        self.method = method
        self.parameters = parameters
        self.more = more
        self.oneway = oneway
        self.upgrade = upgrade
    }

    /// The interface part of `method`: everything before its last dot.
    public var interface: String {
        guard let dot = method.lastIndex(of: ".") else { return "" }
        return String(method[..<dot])
    }

    /// The method's own name: everything after the last dot.
    public var member: String {
        guard let dot = method.lastIndex(of: ".") else { return method }
        return String(method[method.index(after: dot)...])
    }

    /// The message as the client sends it, without its NUL.
    public var encoded: [UInt8] {
        var members: [String: JSONValue] = ["method": .string(method)]
        if !parameters.isEmpty { members["parameters"] = .object(parameters) }
        if more { members["more"] = true }
        if oneway { members["oneway"] = true }
        if upgrade { members["upgrade"] = true }
        var output: [UInt8] = []
        JSONValue.object(members).write(to: &output)
        return output
    }

    /// Reads one message; a message that is not a call object is `InvalidMessage`, and a `parameters` that is
    /// not an object is `InvalidParameter`.
    public static func decode(_ message: ArraySlice<UInt8>) -> Result<VarlinkCall, VarlinkError> {
        let parsed = message.withUnsafeBufferPointer { raw in
            Result { () throws(JSONParseError) in try JSONValue(parsing: raw) }
        }
        let value: JSONValue
        switch parsed {
        case .success(let decoded): value = decoded
        case .failure(let error): return .failure(.invalidMessage("not JSON: \(error)"))
        }
        guard let object = value.objectValue else { return .failure(.invalidMessage("a call is a JSON object")) }
        guard let method = object["method"]?.stringValue, !method.isEmpty else {
            return .failure(.invalidMessage("a call names its method as a string"))
        }
        var call = VarlinkCall(method: method)
        switch object["parameters"] {
        case .none, .null?: break
        case .object(let parameters)?: call.parameters = parameters
        case .some: return .failure(.invalidParameter("parameters"))
        }
        for (name, flag) in [("more", \VarlinkCall.more), ("oneway", \.oneway), ("upgrade", \.upgrade)] {
            switch object[name] {
            case .none, .null?: break
            case .bool(let value)?: call[keyPath: flag] = value
            case .some: return .failure(.invalidMessage("\(name) must be a boolean"))
            }
        }
        return .success(call)
    }
}
