public import FlagsCore

extension FeatureFlagsResponse {
    /// The `response` object in the upstream shape, so that the disk cache is read back by the same decoder.
    ///
    /// `baseURL` is not written: an address belongs to the envelope, and the daemon keeps it apart (BaseAddress).
    public var jsonValue: JSONValue {
        let entries: [JSONValue] = flags.map { flag in
            [
                "key": .string(flag.key), "enabled": .bool(flag.isEnabled), "rule_id": .string(flag.ruleId),
                "properties": .object(flag.properties),
            ]
        }
        return ["flags": .array(entries), "partial": .bool(partial)]
    }
}
