public import FlagsCore
public import FoundationEssentials

/// A `getFeatureFlags` reply: the flags, whether they are partial, and a new base if one was sent.
///
/// The one type for flags from upstream. ``decode(body:)`` reads a whole HTTP body (envelope included);
/// ``decode(responseObject:)`` reads the `response` object alone, which is also the shape of the local flags file
/// and of the disk cache's `response` member.
public struct FeatureFlagsResponse: Sendable, Equatable {
    /// The flags in the order the server sent them; keys are unique.
    public var flags: [Flag]
    /// True when segments were not determined in time (R13): serve, never store.
    public var partial: Bool
    /// The envelope's `base_url`, when it sent an acceptable one; later calls go there unless `ServerURL` is set.
    ///
    /// Always nil for a bare `response` object: only an envelope carries an address.
    public var baseURL: URL?

    public init(flags: [Flag], partial: Bool = false, baseURL: URL? = nil) {
        self.flags = flags
        self.partial = partial
        self.baseURL = baseURL
    }

    /// Decodes the body of an HTTP 200 reply to `getFeatureFlags`.
    ///
    /// A missing or non-object `response` is unusable: only an explicit `response` without `flags` means "no
    /// flags", so that a proxy's bare `{"status_code": 200}` cannot wipe the stored flags.
    public static func decode(body: [UInt8]) throws(PushwooshError) -> FeatureFlagsResponse {
        let envelope = try PushwooshEnvelope.decode(body: body)
        guard let response = envelope.response, response.objectValue != nil else {
            throw .unusable("reply has no response object")
        }
        var decoded = try decode(responseObject: response)
        decoded.baseURL = envelope.baseURL
        return decoded
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
