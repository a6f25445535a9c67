/// The server's verdict on one feature flag for this device and user (R1, R4).
public struct Flag: Sendable, Hashable {
    /// The flag's key, case-sensitive (R2).
    public var key: String
    /// Whether the flag is enabled for this device and user.
    public var isEnabled: Bool
    /// The deciding rule's id, `default` when no rule matched, `""` when the flag was killed (R4, R14).
    public var ruleId: String
    /// Property values as the server sent them; the Control Panel defaults when the flag is disabled (R6).
    public var properties: [String: JSONValue]
    /// Where the value came from; nil when it was not said (a flag built in code, an older daemon).
    public var source: FlagSource?
    /// An overridden flag's value in the source itself: nil when the source has no such key, or when the flag is
    /// not overridden.
    public var sourceValue: FlagValue?

    public init(
        key: String, isEnabled: Bool, ruleId: String, properties: [String: JSONValue] = [:],
        source: FlagSource? = nil, sourceValue: FlagValue? = nil
    ) {
        self.key = key
        self.isEnabled = isEnabled
        self.ruleId = ruleId
        self.properties = properties
        self.source = source
        self.sourceValue = sourceValue
    }

    /// The rule id of a flag decided by no rule.
    public static let defaultRuleId = "default"

    /// The rule id of an overridden flag: no Pushwoosh rule decided it.
    public static let overrideRuleId = "override"

    /// True when a local override forced the flag's value.
    public var isOverridden: Bool { source == .override }

    /// True when the flag was killed in the Control Panel (R14).
    public var isKilled: Bool { ruleId.isEmpty }
}

extension Flag {
    /// True when the two flags are the same to the byte, which `==` does not say: it compares strings by
    /// Unicode canonical equivalence, so a property value that changed from a precomposed "é" to a decomposed
    /// one would be equal, and no listener would hear of it (R9).
    public func isIdentical(to other: Flag) -> Bool {
        guard self == other, FlagKey(key) == FlagKey(other.key), FlagKey(ruleId) == FlagKey(other.ruleId) else {
            return false
        }
        if let value = sourceValue, let otherValue = other.sourceValue, !value.isIdentical(to: otherValue) {
            return false
        }
        return Self.sameBytes(properties, other.properties)
    }

    /// True when the two property objects serialize to the same bytes.
    static func sameBytes(_ one: [String: JSONValue], _ other: [String: JSONValue]) -> Bool {
        guard !one.isEmpty else { return true }
        var mine: [UInt8] = []
        var theirs: [UInt8] = []
        JSONValue.object(one).write(to: &mine)
        JSONValue.object(other).write(to: &theirs)
        return mine == theirs
    }
}
