public import FlagsCore

/// The flag object of docs/protocol.md:
/// `{"key":…,"enabled":…,"ruleId":…,"properties":{…},"source":…}`, and for an overridden flag also
/// `"sourceValue":{"enabled":…,"ruleId":…,"properties":{…},"source":…}` (null when the source has no such key).
extension Flag {
    /// Appends the flag object, members in the order the protocol shows them.
    public func writeWire(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"key":"#.utf8)
        JSONValue.writeString(key, to: &output)
        output.append(UInt8(ascii: ","))
        Self.writeValue(isEnabled: isEnabled, ruleId: ruleId, properties: properties, source: source, to: &output)
        if source == .override {
            output.append(contentsOf: #","sourceValue":"#.utf8)
            if let sourceValue {
                output.append(UInt8(ascii: "{"))
                Self.writeValue(
                    isEnabled: sourceValue.isEnabled, ruleId: sourceValue.ruleId, properties: sourceValue.properties,
                    source: sourceValue.source, to: &output)
                output.append(UInt8(ascii: "}"))
            } else {
                output.append(contentsOf: "null".utf8)
            }
        }
        output.append(UInt8(ascii: "}"))
    }

    /// The members a flag and its source value share: `"enabled":…,"ruleId":…,"properties":{…}[,"source":…]`.
    private static func writeValue(
        isEnabled: Bool, ruleId: String, properties: [String: JSONValue], source: FlagSource?,
        to output: inout [UInt8]
    ) {
        output.append(contentsOf: (isEnabled ? #""enabled":true,"ruleId":"# : #""enabled":false,"ruleId":"#).utf8)
        JSONValue.writeString(ruleId, to: &output)
        output.append(contentsOf: #","properties":"#.utf8)
        JSONValue.object(properties).write(to: &output)
        if let source {
            output.append(contentsOf: #","source":"#.utf8)
            JSONValue.writeString(source.rawValue, to: &output)
        }
    }

    /// The flag object as bytes.
    public var wireBytes: [UInt8] {
        var output: [UInt8] = []
        writeWire(to: &output)
        return output
    }

    /// The flag object as a value, read back from what `writeWire` writes.
    public var wireValue: JSONValue {
        (try? JSONValue(parsing: wireBytes)) ?? .null
    }

    /// Reads a flag object; nil when it lacks a string key, a boolean enabled or a string ruleId. An unknown
    /// `source` reads as nil (a newer daemon may name more sources).
    public init?(wire value: JSONValue) {
        guard let key = value["key"]?.stringValue, let base = FlagValue(wire: value) else { return nil }
        self.init(
            key: key, isEnabled: base.isEnabled, ruleId: base.ruleId, properties: base.properties,
            source: base.source, sourceValue: value["sourceValue"].flatMap(FlagValue.init(wire:)))
    }
}

extension FlagValue {
    /// Reads the value members of a flag object (or of its `sourceValue`); nil when they are missing or mistyped.
    public init?(wire value: JSONValue) {
        guard let enabled = value["enabled"]?.boolValue, let ruleId = value["ruleId"]?.stringValue else {
            return nil
        }
        self.init(
            isEnabled: enabled, ruleId: ruleId, properties: value["properties"]?.objectValue ?? [:],
            source: value["source"]?.stringValue.flatMap(FlagSource.init(rawValue:)))
    }
}
