public import FlagsCore

/// The `response` object of `getFeatureFlags`, and the shape of the local flags file.
///
/// The decoder is public and works on the `response` object alone (no envelope) because the daemon reads the
/// local flags file in the same shape.
public struct FeatureFlagsResponse: Sendable, Equatable {
    /// The flags in the order the server sent them; keys are unique.
    public var flags: [Flag]
    /// True when segments were not determined in time (R13).
    public var partial: Bool

    public init(flags: [Flag], partial: Bool = false) {
        self.flags = flags
        self.partial = partial
    }

    /// Decodes a `response` object.
    ///
    /// - `flags` missing means no flags; present, it must be an array.
    /// - Each entry must be an object with a string `key` and a boolean `enabled`.
    /// - `rule_id` must be a string when present. A missing `rule_id` reads as `"default"` (``Flag/defaultRuleId``):
    ///   the server sends `"default"` when no rule matched, and a missing member must never read as `""`, which
    ///   would mean the flag was killed (R14). A `null` `rule_id` is present and not a string, so it is refused.
    /// - `properties` missing means none; present, it must be an object.
    /// - `partial` missing means false; present, it must be a boolean.
    /// - A key seen twice makes the whole response unusable: which entry wins would be a guess.
    ///
    /// Every failure is status 200 (unusable).
    public static func decode(responseObject: JSONValue) throws(PushwooshError) -> FeatureFlagsResponse {
        guard let members = responseObject.objectValue else { throw .unusable("response is not an object") }
        var partial = false
        if let value = members["partial"] {
            guard let bool = value.boolValue else { throw .unusable("partial is not a boolean") }
            partial = bool
        }
        guard let flagsValue = members["flags"] else { return FeatureFlagsResponse(flags: [], partial: partial) }
        guard let entries = flagsValue.arrayValue else { throw .unusable("flags is not an array") }
        var flags: [Flag] = []
        flags.reserveCapacity(entries.count)
        // Exact keys: "café" precomposed and decomposed are two flags, not a duplicate (R2).
        var seen: Set<FlagKey> = []
        for (index, entry) in entries.enumerated() {
            let flag = try decodeFlag(entry, index: index)
            guard seen.insert(FlagKey(flag.key)).inserted else {
                throw .unusable("duplicate flag key \(PushwooshEnvelope.clipped(flag.key))")
            }
            flags.append(flag)
        }
        return FeatureFlagsResponse(flags: flags, partial: partial)
    }

    private static func decodeFlag(_ entry: JSONValue, index: Int) throws(PushwooshError) -> Flag {
        guard let members = entry.objectValue else { throw .unusable("flag entry \(index) is not an object") }
        guard let key = members["key"]?.stringValue else {
            throw .unusable("flag entry \(index) has no string key")
        }
        guard let enabled = members["enabled"]?.boolValue else {
            throw .unusable("flag entry \(index) has no boolean enabled")
        }
        var ruleId = Flag.defaultRuleId
        if let value = members["rule_id"] {
            guard let string = value.stringValue else { throw .unusable("flag entry \(index) rule_id is not a string") }
            ruleId = string
        }
        var properties: [String: JSONValue] = [:]
        if let value = members["properties"] {
            guard let object = value.objectValue else {
                throw .unusable("flag entry \(index) properties is not an object")
            }
            properties = object
        }
        return Flag(key: key, isEnabled: enabled, ruleId: ruleId, properties: properties)
    }
}
