public import FlagsCore

/// One feature flag as the daemon serves it: the Swift shape of the Pushwoosh SDK's `PWFeatureFlag`.
///
/// A value: it does not change when the daemon's flags change; call `FeatureFlags.get(_:)` again for the
/// current state. The typed reads are FlagsCore's (`Flag+Properties.swift`), the very code behind the
/// daemon's and the CLI's reads, so a property reads the same everywhere (R6).
public struct FeatureFlag: Sendable, Hashable, CustomStringConvertible {
    /// The flag as FlagsCore models it, for code that wants the raw property values.
    public let flag: Flag

    /// Wraps a flag as FlagsCore models it (the daemon's wire form, decoded).
    public init(_ flag: Flag) {
        self.flag = flag
    }

    /// The flag's key, case-sensitive.
    public var key: String { flag.key }

    /// Whether the flag is enabled for this device and user.
    public var isEnabled: Bool { flag.isEnabled }

    /// The deciding rule's id: `default` when no rule matched, `""` when the flag was killed (R4, R14).
    public var ruleId: String { flag.ruleId }

    /// Where the value came from: Pushwoosh, the local flags file, or an override set on this device; nil from a
    /// daemon that does not say.
    public var source: FlagSource? { flag.source }

    /// True when an override set on this device (`pwflags override set`) forces the value.
    public var isOverridden: Bool { flag.isOverridden }

    /// An overridden flag as the source itself holds it, with the same typed reads; nil when the flag is not
    /// overridden or the source has no such key (the override added it).
    public var sourceValue: FeatureFlag? {
        guard flag.isOverridden, let value = flag.sourceValue else { return nil }
        return FeatureFlag(
            Flag(
                key: flag.key, isEnabled: value.isEnabled, ruleId: value.ruleId, properties: value.properties,
                source: value.source))
    }

    /// The value of a String property, or `defaultValue` when it is missing or not a string.
    ///
    /// Optional like the SDK's, so `?? "blue"` after it compiles without a warning.
    public func string(forProperty name: String, default defaultValue: String?) -> String? {
        flag.string(forProperty: name, default: defaultValue)
    }

    /// The value of a Number property as a Double, or `defaultValue` when it is missing or not a number.
    public func number(forProperty name: String, default defaultValue: Double) -> Double {
        flag.number(forProperty: name, default: defaultValue)
    }

    /// The value of a Boolean property, or `defaultValue` when it is missing or not a boolean (never `1`).
    public func bool(forProperty name: String, default defaultValue: Bool) -> Bool {
        flag.bool(forProperty: name, default: defaultValue)
    }

    /// A JSON property holding an object, typed: what to use when the value must be compared or re-encoded.
    public func jsonObjectValue(forProperty name: String) -> [String: JSONValue]? {
        flag.jsonObject(forProperty: name)
    }

    /// A JSON property holding an array, typed.
    public func jsonArrayValue(forProperty name: String) -> [JSONValue]? {
        flag.jsonArray(forProperty: name)
    }

    /// `key enabled|disabled rule=ID`, for logs.
    public var description: String {
        "\(key) \(isEnabled ? "enabled" : "disabled") rule=\(ruleId.isEmpty ? "\"\"" : ruleId)"
    }
}
