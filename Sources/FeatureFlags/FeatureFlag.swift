public import FlagsCore

/// One feature flag as the daemon serves it: the Swift shape of the Pushwoosh SDK's `PWFeatureFlag`.
///
/// A value: it does not change when the daemon's flags change; call `FeatureFlags.get(_:)` again for the
/// current state. The typed reads are FlagsCore's (`Flag+Properties.swift`), the very code behind the
/// daemon's and the CLI's reads, so a property reads the same everywhere (R6).
public struct FeatureFlag: Sendable, Hashable, CustomStringConvertible {
    /// The flag, shared with the mirror it was read from: `get` hands out one reference instead of copying a
    /// `Flag` (a copy through its value witness, a third of a read).
    private let box: FlagBox

    /// The flag as FlagsCore models it, for code that wants the raw property values.
    public var flag: Flag { box.flag }

    /// Wraps a flag as FlagsCore models it (the daemon's wire form, decoded).
    public init(_ flag: Flag) {
        self.box = FlagBox(flag)
    }

    init(_ box: FlagBox) {
        self.box = box
    }

    public static func == (lhs: FeatureFlag, rhs: FeatureFlag) -> Bool {
        lhs.box === rhs.box || lhs.box.flag == rhs.box.flag
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(box.flag)
    }

    /// The flag's key, case-sensitive.
    public var key: String { box.flag.key }

    /// Whether the flag is enabled for this device and user.
    public var isEnabled: Bool { box.flag.isEnabled }

    /// The deciding rule's id: `default` when no rule matched, `""` when the flag was killed (R4, R14).
    public var ruleId: String { box.flag.ruleId }

    /// Where the value came from: Pushwoosh, the local flags file, or an override set on this device; nil from a
    /// daemon that does not say.
    public var source: FlagSource? { box.flag.source }

    /// True when an override set on this device (`pwflags override set`) forces the value.
    public var isOverridden: Bool { box.flag.isOverridden }

    /// An overridden flag as the source itself holds it, with the same typed reads; nil when the flag is not
    /// overridden or the source has no such key (the override added it).
    public var sourceValue: FeatureFlag? {
        guard box.flag.isOverridden, let value = box.flag.sourceValue else { return nil }
        return FeatureFlag(
            Flag(
                key: box.flag.key, isEnabled: value.isEnabled, ruleId: value.ruleId, properties: value.properties,
                source: value.source))
    }

    /// The value of a String property, or `defaultValue` when it is missing or not a string.
    ///
    /// Optional like the SDK's, so `?? "blue"` after it compiles without a warning.
    public func string(forProperty name: String, default defaultValue: String?) -> String? {
        box.flag.string(forProperty: name, default: defaultValue)
    }

    /// The value of a Number property as a Double, or `defaultValue` when it is missing or not a number.
    public func number(forProperty name: String, default defaultValue: Double) -> Double {
        box.flag.number(forProperty: name, default: defaultValue)
    }

    /// The value of a Boolean property, or `defaultValue` when it is missing or not a boolean (never `1`).
    public func bool(forProperty name: String, default defaultValue: Bool) -> Bool {
        box.flag.bool(forProperty: name, default: defaultValue)
    }

    /// A JSON property holding an object, typed: what to use when the value must be compared or re-encoded.
    public func jsonObjectValue(forProperty name: String) -> [String: JSONValue]? {
        box.flag.jsonObject(forProperty: name)
    }

    /// A JSON property holding an array, typed.
    public func jsonArrayValue(forProperty name: String) -> [JSONValue]? {
        box.flag.jsonArray(forProperty: name)
    }

    /// `key enabled|disabled rule=ID`, for logs.
    public var description: String {
        "\(key) \(isEnabled ? "enabled" : "disabled") rule=\(ruleId.isEmpty ? "\"\"" : ruleId)"
    }
}

/// One flag behind a reference, as the client library's mirror keeps it for readers.
final class FlagBox: Sendable {
    let flag: Flag

    init(_ flag: Flag) {
        self.flag = flag
    }
}
