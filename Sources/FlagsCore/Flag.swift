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

    public init(key: String, isEnabled: Bool, ruleId: String, properties: [String: JSONValue] = [:]) {
        self.key = key
        self.isEnabled = isEnabled
        self.ruleId = ruleId
        self.properties = properties
    }

    /// The rule id of a flag decided by no rule.
    public static let defaultRuleId = "default"

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
        guard !properties.isEmpty else { return true }
        var mine: [UInt8] = []
        var theirs: [UInt8] = []
        JSONValue.object(properties).write(to: &mine)
        JSONValue.object(other.properties).write(to: &theirs)
        return mine == theirs
    }
}
