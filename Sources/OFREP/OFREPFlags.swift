public import FlagsCore

/// The daemon's flags as OFREP evaluations, built once per flag set and shared by every request.
///
/// The mapping (README, OpenFeature):
/// - every Pushwoosh flag `KEY` is a boolean OFREP flag `KEY` whose value is `enabled`;
/// - every property `PROP` of it is an OFREP flag `KEY.PROP` whose value is the property's JSON value (string,
///   number, boolean, object or array); a `null` property has no value, which tells the provider to use the
///   code's default;
/// - a real flag key wins over a property path that spells the same key, and between two property paths that
///   collide the one of the flag that sorts first wins;
/// - `reason`: a matched rule is `TARGETING_MATCH`, the `default` rule is `DEFAULT`, a killed flag (empty rule
///   id) is `DISABLED`, a flag a local override forces is `STATIC`; a property has the reason of its flag;
/// - `variant` is the deciding rule's id (`default` for the default rule, `killed` for a killed flag);
/// - `metadata` holds scalars only: `ruleId`, `source` (`pushwoosh`, `file` or `override`) when the flag says it,
///   and for a property `flagKey` and `property`.
public struct OFREPFlags: Sendable {
    /// Each OFREP flag's evaluation, by exact key.
    public let evaluations: [FlagKey: JSONValue]
    /// The bulk answer's body, every evaluation sorted by key.
    public let bulkBody: [UInt8]
    /// The bulk answer's entity tag: a digest of `bulkBody`, so it changes exactly when the body does.
    public let bulkETag: EntityTag

    public init(_ flags: FlagSet) {
        var evaluations: [FlagKey: JSONValue] = [:]
        let sorted = flags.sorted
        for flag in sorted { evaluations[FlagKey(flag.key)] = Self.evaluation(of: flag) }
        for flag in sorted {
            for (name, value) in flag.properties.sorted(by: { $0.key < $1.key }) {
                let key = FlagKey(flag.key + "." + name)
                guard evaluations[key] == nil else { continue }
                evaluations[key] = Self.evaluation(of: flag, property: name, value: value)
            }
        }
        self.evaluations = evaluations
        let list = evaluations.sorted { $0.key < $1.key }.map(\.value)
        var body: [UInt8] = []
        JSONValue.object(["flags": .array(list)]).write(to: &body)
        self.bulkBody = body
        self.bulkETag = EntityTag(digestOf: body)
    }

    /// The evaluation of `key`, or nil when no flag or property reads as it.
    public func evaluation(of key: String) -> JSONValue? {
        evaluations[FlagKey(key)]
    }

    /// The OpenFeature reason of a flag's value: its rule's, or `STATIC` when a local override forces it.
    public static func reason(of flag: Flag) -> String {
        if flag.isOverridden { return "STATIC" }
        if flag.ruleId.isEmpty { return "DISABLED" }
        return flag.ruleId == Flag.defaultRuleId ? "DEFAULT" : "TARGETING_MATCH"
    }

    /// The scalar metadata every evaluation of `flag` carries.
    static func metadata(of flag: Flag) -> [String: JSONValue] {
        var metadata: [String: JSONValue] = ["ruleId": .string(flag.ruleId)]
        if let source = flag.source { metadata["source"] = .string(source.rawValue) }
        return metadata
    }

    /// The variant: the deciding rule, which picks the flag's whole outcome (enabled and properties alike).
    public static func variant(ruleId: String) -> String {
        ruleId.isEmpty ? "killed" : ruleId
    }

    static func evaluation(of flag: Flag) -> JSONValue {
        [
            "key": .string(flag.key),
            "value": .bool(flag.isEnabled),
            "reason": .string(reason(of: flag)),
            "variant": .string(variant(ruleId: flag.ruleId)),
            "metadata": .object(metadata(of: flag)),
        ]
    }

    static func evaluation(of flag: Flag, property: String, value: JSONValue) -> JSONValue {
        var metadata = metadata(of: flag)
        metadata["flagKey"] = .string(flag.key)
        metadata["property"] = .string(property)
        var members: [String: JSONValue] = [
            "key": .string(flag.key + "." + property),
            "reason": .string(reason(of: flag)),
            "variant": .string(variant(ruleId: flag.ruleId)),
            "metadata": .object(metadata),
        ]
        if !value.isNull { members["value"] = value }
        return .object(members)
    }
}
