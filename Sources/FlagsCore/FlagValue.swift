/// A flag's value without its key: what the source itself holds under an override (`Flag.sourceValue`).
public struct FlagValue: Sendable, Hashable {
    public var isEnabled: Bool
    public var ruleId: String
    public var properties: [String: JSONValue]
    /// Pushwoosh or the local file; nil when it was not said.
    public var source: FlagSource?

    public init(isEnabled: Bool, ruleId: String, properties: [String: JSONValue] = [:], source: FlagSource? = nil) {
        self.isEnabled = isEnabled
        self.ruleId = ruleId
        self.properties = properties
        self.source = source
    }

    /// The value of `flag`, without its key (and without a source value of its own).
    public init(_ flag: Flag) {
        self.init(isEnabled: flag.isEnabled, ruleId: flag.ruleId, properties: flag.properties, source: flag.source)
    }

    /// True when the two are the same to the byte (see `Flag.isIdentical(to:)`).
    public func isIdentical(to other: FlagValue) -> Bool {
        guard self == other, FlagKey(ruleId) == FlagKey(other.ruleId) else { return false }
        return Flag.sameBytes(properties, other.properties)
    }
}
