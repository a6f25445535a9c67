public import FlagsCore

/// The daemon's flags as OFREP evaluations: single evaluations computed on demand, the bulk answer built once
/// per flag set and shared by every request.
///
/// The mapping (docs/openfeature.md):
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
///
/// Bounded: each property's evaluation repeats its flag's key, so a flag with a long key and many properties
/// reads as far more bytes than it holds. A single evaluation costs what its one flag or property holds; the
/// bulk answer is built only up to `maximumBulkBytes` and refused past it (`bulk` is `.tooLarge`), so building
/// it never takes more than that bound of memory and time, whatever the flags.
public struct OFREPFlags: Sendable {
    /// The bulk answer: its body and entity tag, or how far building went before it passed the bound.
    public enum Bulk: Sendable, Equatable {
        case body([UInt8], EntityTag)
        /// Over `maximumBulkBytes`: the bytes built when building stopped.
        case tooLarge(atLeast: Int)
    }

    /// The most bytes a bulk answer may have, by default (16 MiB).
    public static let defaultMaximumBulkBytes = 16 << 20

    /// The flags the evaluations read.
    public let flags: FlagSet
    /// The bulk answer, every evaluation sorted by key.
    public let bulk: Bulk

    public init(_ flags: FlagSet, maximumBulkBytes: Int = OFREPFlags.defaultMaximumBulkBytes) {
        self.flags = flags
        self.bulk = Self.bulk(of: flags, maximumBytes: maximumBulkBytes)
    }

    init(flags: FlagSet, bulk: Bulk) {
        self.flags = flags
        self.bulk = bulk
    }

    /// The bulk answer's body, or nil when it is over the bound.
    public var bulkBody: [UInt8]? {
        if case .body(let body, _) = bulk { return body }
        return nil
    }

    /// The bulk answer's entity tag: a digest of the body, so it changes exactly when the body does.
    public var bulkETag: EntityTag? {
        if case .body(_, let tag) = bulk { return tag }
        return nil
    }

    /// The evaluation of `key`, or nil when no flag or property reads as it.
    ///
    /// A real flag wins; otherwise the property path whose flag key is the shortest prefix of `key` ending
    /// before a dot, which is the flag that sorts first among those that spell `key`.
    public func evaluation(of key: String) -> JSONValue? {
        guard let found = resolve(key) else { return nil }
        guard let property = found.property else { return Self.evaluation(of: found.flag) }
        return Self.evaluation(of: found.flag, property: property.name, value: property.value)
    }

    /// The flag whose evaluation `key` reads (itself, or the flag of the property path), or nil when none does.
    public func flag(deciding key: String) -> Flag? {
        resolve(key)?.flag
    }

    /// The flag `key` names, or the flag and property of the property path it spells, as `evaluation(of:)` says.
    private func resolve(_ key: String) -> (flag: Flag, property: (name: String, value: JSONValue)?)? {
        if let flag = flags[key] { return (flag, nil) }
        let bytes = Array(key.utf8)
        for index in bytes.indices where bytes[index] == UInt8(ascii: ".") {
            let name = String(decoding: bytes[(index + 1)...], as: UTF8.self)
            guard let flag = flags[String(decoding: bytes[..<index], as: UTF8.self)], let value = flag.properties[name]
            else { continue }
            return (flag, (name, value))
        }
        return nil
    }

    /// Builds the bulk body key by key, stopping as soon as it passes `maximumBytes`.
    static func bulk(of flags: FlagSet, maximumBytes: Int) -> Bulk {
        var entries: [(key: FlagKey, bytes: [UInt8])] = []
        var keys: Set<FlagKey> = []
        var total = 0
        let sorted = flags.sorted
        for flag in sorted {
            var bytes: [UInt8] = []
            evaluation(of: flag).write(to: &bytes)
            total += bytes.count + 1
            guard total <= maximumBytes else { return .tooLarge(atLeast: total) }
            let key = FlagKey(flag.key)
            keys.insert(key)
            entries.append((key, bytes))
        }
        for flag in sorted {
            // The parts every property of this flag shares, escaped once: a property costs a few copies.
            var escapedKey: [UInt8] = []
            JSONValue.writeString(flag.key, to: &escapedKey)
            escapedKey = Array(escapedKey.dropFirst().dropLast())
            var shared: [UInt8] = []
            JSONValue.object(metadata(of: flag)).write(to: &shared)
            let ruleAndSource = Array(shared.dropFirst().dropLast())
            var reason: [UInt8] = []
            JSONValue.writeString(Self.reason(of: flag), to: &reason)
            var variant: [UInt8] = []
            JSONValue.writeString(Self.variant(ruleId: flag.ruleId), to: &variant)
            for (name, value) in flag.properties.sorted(by: { FlagKey($0.key) < FlagKey($1.key) }) {
                // The key alone appears twice in the evaluation: stop before building one that cannot fit.
                guard total + 2 * (escapedKey.count + name.utf8.count) <= maximumBytes else {
                    return .tooLarge(atLeast: total + 2 * (escapedKey.count + name.utf8.count))
                }
                let key = FlagKey(flag.key + "." + name)
                guard keys.insert(key).inserted else { continue }
                var escapedName: [UInt8] = []
                JSONValue.writeString(name, to: &escapedName)
                escapedName = Array(escapedName.dropFirst().dropLast())
                // Byte for byte what `evaluation(of:property:value:)` writes: members in name order.
                var bytes: [UInt8] = []
                bytes.reserveCapacity(2 * (escapedKey.count + escapedName.count) + ruleAndSource.count + 96)
                bytes.append(contentsOf: #"{"key":""#.utf8)
                bytes.append(contentsOf: escapedKey)
                bytes.append(UInt8(ascii: "."))
                bytes.append(contentsOf: escapedName)
                bytes.append(contentsOf: #"","metadata":{"flagKey":""#.utf8)
                bytes.append(contentsOf: escapedKey)
                bytes.append(contentsOf: #"","property":""#.utf8)
                bytes.append(contentsOf: escapedName)
                bytes.append(contentsOf: #"","#.utf8)
                bytes.append(contentsOf: ruleAndSource)
                bytes.append(contentsOf: #"},"reason":"#.utf8)
                bytes.append(contentsOf: reason)
                if !value.isNull {
                    bytes.append(contentsOf: #","value":"#.utf8)
                    value.write(to: &bytes)
                }
                bytes.append(contentsOf: #","variant":"#.utf8)
                bytes.append(contentsOf: variant)
                bytes.append(UInt8(ascii: "}"))
                total += bytes.count + 1
                guard total <= maximumBytes else { return .tooLarge(atLeast: total) }
                entries.append((key, bytes))
            }
        }
        entries.sort { $0.key < $1.key }
        var body: [UInt8] = []
        body.reserveCapacity(total + 16)
        body.append(contentsOf: "{\"flags\":[".utf8)
        for (index, entry) in entries.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: entry.bytes)
        }
        body.append(contentsOf: "]}".utf8)
        return .body(body, EntityTag(digestOf: body))
    }

    /// The OpenFeature reason of a flag's value: its rule's; `STATIC` when a local override forces it; `CACHED`
    /// for the device image's seed, a stored earlier answer and not an evaluation for this device.
    public static func reason(of flag: Flag) -> String {
        if flag.isOverridden { return "STATIC" }
        if flag.source == .seed { return "CACHED" }
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
