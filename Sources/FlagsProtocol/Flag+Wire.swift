public import FlagsCore

/// The flag object of the README's Protocol section: `{"key":…,"enabled":…,"ruleId":…,"properties":{…}}`.
extension Flag {
    /// Appends the flag object, members in the order the protocol shows them.
    public func writeWire(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"key":"#.utf8)
        JSONValue.writeString(key, to: &output)
        output.append(contentsOf: (isEnabled ? #","enabled":true,"ruleId":"# : #","enabled":false,"ruleId":"#).utf8)
        JSONValue.writeString(ruleId, to: &output)
        output.append(contentsOf: #","properties":"#.utf8)
        JSONValue.object(properties).write(to: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// The flag object as bytes.
    public var wireBytes: [UInt8] {
        var output: [UInt8] = []
        writeWire(to: &output)
        return output
    }

    /// The flag object as a value.
    public var wireValue: JSONValue {
        [
            "key": .string(key), "enabled": .bool(isEnabled), "ruleId": .string(ruleId),
            "properties": .object(properties),
        ]
    }

    /// Reads a flag object; nil when it lacks a string key, a boolean enabled or a string ruleId.
    public init?(wire value: JSONValue) {
        guard let key = value["key"]?.stringValue, let enabled = value["enabled"]?.boolValue,
            let ruleId = value["ruleId"]?.stringValue
        else { return nil }
        let properties = value["properties"]?.objectValue ?? [:]
        self.init(key: key, isEnabled: enabled, ruleId: ruleId, properties: properties)
    }
}
