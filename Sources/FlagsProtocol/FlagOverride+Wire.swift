public import FlagsCore

/// The override object of `setOverride`'s params, `listOverrides` and the overrides file:
/// `{"key":…,"enabled":true|false|null,"properties":{…}}` (`enabled` null: the source's state).
extension FlagOverride {
    /// The most overrides a daemon keeps: enough for any QA session, and a bound on the file and on memory.
    public static let limit = 1000

    /// Appends the override object.
    public func writeWire(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"key":"#.utf8)
        JSONValue.writeString(key, to: &output)
        switch isEnabled {
        case true?: output.append(contentsOf: #","enabled":true"#.utf8)
        case false?: output.append(contentsOf: #","enabled":false"#.utf8)
        case nil: output.append(contentsOf: #","enabled":null"#.utf8)
        }
        output.append(contentsOf: #","properties":"#.utf8)
        JSONValue.object(properties).write(to: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// The override object as a value.
    public var wireValue: JSONValue {
        var output: [UInt8] = []
        writeWire(to: &output)
        return (try? JSONValue(parsing: output)) ?? .null
    }

    /// Reads an override object (or `setOverride`'s params), saying which member is wrong (-32602): `key` a
    /// non-empty string, `enabled` a boolean or null or absent, `properties` an object or null or absent.
    public init(params: [String: JSONValue]) throws(RPCError) {
        guard let member = params["key"] else { throw RPCError.invalidParams("key", "is missing") }
        guard let key = member.stringValue else { throw RPCError.invalidParams("key", "must be a string") }
        guard !key.isEmpty else { throw RPCError.invalidParams("key", "must not be empty") }
        let enabled: Bool?
        switch params["enabled"] {
        case .none, .null?: enabled = nil
        case .bool(let value)?: enabled = value
        case .some: throw RPCError.invalidParams("enabled", "must be a boolean")
        }
        let properties: [String: JSONValue]
        switch params["properties"] {
        case .none, .null?: properties = [:]
        case .object(let object)?: properties = object
        case .some: throw RPCError.invalidParams("properties", "must be an object")
        }
        self.init(key: key, isEnabled: enabled, properties: properties)
    }
}
