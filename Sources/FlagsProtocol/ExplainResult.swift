public import FlagsCore

/// The result of `explain`: why the flag `key` reads as it does, or why it reads as nothing, with the state of
/// the flags it belongs to (fetch time, expiry, errors, the next refresh) and who listens to it.
///
/// Times are ISO 8601 UTC timestamps, nil (null on the wire) when there is none.
public struct ExplainResult: CallResult, Equatable {
    /// What decided a flag's value, read from its `ruleId` (R4, R14).
    public enum Rule: String, Sendable, Equatable {
        /// A targeting rule matched: `ruleId` is its id.
        case matched
        /// No rule matched: `ruleId` is `default`.
        case `default`
        /// The flag was killed: `ruleId` is empty, the flag is disabled with its default properties.
        case killed
        /// A local override forces the value on this device (`ruleId` is `override`); no rule decided it.
        case override

        /// The rule kind a `ruleId` stands for.
        public init(ruleId: String) {
            switch ruleId {
            case "": self = .killed
            case "default": self = .default
            default: self = .matched
            }
        }
    }

    /// Why a key reads as nothing.
    public enum Absence: String, Sendable, Equatable {
        /// The daemon has no flags at all yet (nothing fetched, no usable disk cache, no readable file).
        case noFlags
        /// The flags were older than `CacheMaxAge` and are no longer served (R15).
        case expired
        /// The daemon has flags, but the response holds no such key (never created, archived, or deleted).
        case notInResponse
        /// As `notInResponse`, and a key that differs only in case exists (keys are case-sensitive, R2).
        case caseDiffers
    }

    public var key: String
    /// The flag as `get` returns it; nil when absent.
    public var flag: Flag?
    /// Where the value comes from: `pushwoosh`, `file` (or `override`); nil when absent.
    public var source: String?
    /// What the rule id means; nil when absent.
    public var rule: Rule?
    /// Why the key reads as nothing; nil when it is present.
    public var absence: Absence?
    /// Keys that differ from `key` only in case.
    public var similarKeys: [String] = []
    /// The revision of the flag set now, and the one at which this key last changed (appeared, changed or went
    /// away) since the daemon started; nil when it has not changed since.
    public var revision = 0
    public var changedAtRevision: Int?
    /// Subscriptions that hear of changes of this key (those to every key included).
    public var subscriptions = 0
    public var fetchedAt: String?
    /// Seconds since `fetchedAt`.
    public var ageSeconds: Double?
    public var expiresAt: String?
    public var stale = false
    public var partial = false
    public var lastError: StatusResult.LastError?
    public var nextRefreshAt: String?
    /// Pushwoosh asked with `Retry-After` that no request go before this (F3); nil when nothing is held.
    public var heldUntil: String?
    /// Why the configured source cannot be used, for people.
    public var problem: String?

    public init(key: String) {
        self.key = key
    }

    public init?(result: JSONValue) {
        guard let key = result["key"]?.stringValue else { return nil }
        self.key = key
        if let member = result["flag"], !member.isNull {
            guard let flag = Flag(wire: member) else { return nil }
            self.flag = flag
        }
        source = result["source"]?.stringValue
        rule = result["rule"]?.stringValue.flatMap(Rule.init(rawValue:))
        absence = result["absence"]?.stringValue.flatMap(Absence.init(rawValue:))
        similarKeys = result["similarKeys"]?.arrayValue?.compactMap(\.stringValue) ?? []
        revision = result["revision"]?.integerValue ?? 0
        changedAtRevision = result["changedAtRevision"]?.integerValue
        subscriptions = result["subscriptions"]?.integerValue ?? 0
        fetchedAt = result["fetchedAt"]?.stringValue
        ageSeconds = result["ageSeconds"]?.numberValue
        expiresAt = result["expiresAt"]?.stringValue
        stale = result["stale"]?.boolValue ?? false
        partial = result["partial"]?.boolValue ?? false
        lastError = StatusResult.LastError(json: result["lastError"])
        nextRefreshAt = result["nextRefreshAt"]?.stringValue
        heldUntil = result["heldUntil"]?.stringValue
        problem = result["problem"]?.stringValue
    }

    /// Appends the result object: `flag` first, in the one byte form every flag object has (`Flag.writeWire`),
    /// then the other members sorted by name.
    public func write(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"flag":"#.utf8)
        if let flag { flag.writeWire(to: &output) } else { output.append(contentsOf: "null".utf8) }
        var rest: [UInt8] = []
        members.write(to: &rest)
        // `rest` is `{…}` with at least `key`: its members follow after a comma, its opening brace dropped.
        output.append(UInt8(ascii: ","))
        output.append(contentsOf: rest.dropFirst())
    }

    private var members: JSONValue {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        return [
            "key": .string(key),
            "source": text(source),
            "rule": text(rule?.rawValue),
            "absence": text(absence?.rawValue),
            "similarKeys": .array(similarKeys.map(JSONValue.string)),
            "revision": .number(Double(revision)),
            "changedAtRevision": changedAtRevision.map { .number(Double($0)) } ?? .null,
            "subscriptions": .number(Double(subscriptions)),
            "fetchedAt": text(fetchedAt),
            "ageSeconds": ageSeconds.map(JSONValue.number) ?? .null,
            "expiresAt": text(expiresAt),
            "stale": .bool(stale),
            "partial": .bool(partial),
            "lastError": lastError?.json ?? .null,
            "nextRefreshAt": text(nextRefreshAt),
            "heldUntil": text(heldUntil),
            "problem": text(problem),
        ]
    }
}
