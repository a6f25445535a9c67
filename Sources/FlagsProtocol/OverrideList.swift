public import FlagsCore

/// The result of `listOverrides`, and the content of the daemon's overrides file:
/// `{"overrides":[OVERRIDE...]}`, sorted by key.
public struct OverrideList: CallResult, Equatable {
    public var overrides: [FlagOverride]

    public init(overrides: [FlagOverride]) {
        self.overrides = overrides.sorted { FlagKey($0.key) < FlagKey($1.key) }
    }

    /// Reads the object; nil when `overrides` is not an array of valid override objects.
    public init?(result: JSONValue) {
        guard let list = result["overrides"]?.arrayValue else { return nil }
        var overrides: [FlagOverride] = []
        for element in list {
            guard let members = element.objectValue, let override = try? FlagOverride(params: members) else {
                return nil
            }
            overrides.append(override)
        }
        self.init(overrides: overrides)
    }

    public func write(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"overrides":["#.utf8)
        for (position, override) in overrides.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            override.writeWire(to: &output)
        }
        output.append(contentsOf: "]}".utf8)
    }
}
