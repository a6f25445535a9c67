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
