/// A flag forced on this device for testing (`setOverride`): layered on top of whatever the source serves.
///
/// `isEnabled` nil keeps the source's state (disabled when the source has no such flag); `properties` replace the
/// source's properties of the same name and leave the others as the source sends them.
public struct FlagOverride: Sendable, Hashable {
    /// The exact key it overrides (R2).
    public var key: String
    public var isEnabled: Bool?
    public var properties: [String: JSONValue]

    public init(key: String, isEnabled: Bool? = nil, properties: [String: JSONValue] = [:]) {
        self.key = key
        self.isEnabled = isEnabled
        self.properties = properties
    }

    /// The flag served while the override is set, over `sourceFlag` (nil: the source has no such key, and the
    /// override adds the flag).
    public func applied(to sourceFlag: Flag?) -> Flag {
        var properties = sourceFlag?.properties ?? [:]
        properties.merge(self.properties) { _, forced in forced }
        return Flag(
            key: key,
            isEnabled: isEnabled ?? sourceFlag?.isEnabled ?? false,
            ruleId: Flag.overrideRuleId,
            properties: properties,
            source: .override,
            sourceValue: sourceFlag.map(FlagValue.init)
        )
    }
}
