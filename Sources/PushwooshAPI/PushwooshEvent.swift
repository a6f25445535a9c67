public import FlagsCore
public import FoundationEssentials

/// An event for `postEvent`: its name, attributes and the two timestamps (docs/behaviour.md, Talking to Pushwoosh).
public struct PushwooshEvent: Sendable, Equatable {
    /// The event name, such as `PW_FeatureFlagImpression`.
    public var name: String
    /// The event's attributes.
    public var attributes: [String: JSONValue]
    /// Unix time in whole seconds.
    public var timestampUTC: Int64
    /// The same moment in local time: Unix seconds plus the local UTC offset.
    public var timestampCurrent: Int64

    /// The event name of an impression (R17).
    public static let impressionEventName = "PW_FeatureFlagImpression"

    /// An event at `date`; `utcOffsetSeconds` is the local offset east of UTC at that moment.
    ///
    /// The caller passes both, rather than this type reading a clock and a time zone, so that tests are exact.
    public init(name: String, attributes: [String: JSONValue], date: Date, utcOffsetSeconds: Int) {
        self.name = name
        self.attributes = attributes
        let unixSeconds = date.timeIntervalSince1970.rounded(.down)
        self.timestampUTC = Int64(exactly: unixSeconds) ?? 0
        self.timestampCurrent = timestampUTC + Int64(utcOffsetSeconds)
    }

    /// The impression of `flag` (R17): attributes `flag_key`, `rule_id` and `enabled`.
    public static func impression(of flag: Flag, date: Date, utcOffsetSeconds: Int) -> PushwooshEvent {
        PushwooshEvent(
            name: impressionEventName,
            attributes: [
                "flag_key": .string(flag.key),
                "rule_id": .string(flag.ruleId),
                "enabled": .bool(flag.isEnabled),
            ],
            date: date,
            utcOffsetSeconds: utcOffsetSeconds)
    }

    /// The members this event adds to the `request` object.
    public var requestMembers: [String: JSONValue] {
        [
            "event": .string(name),
            "attributes": .object(attributes),
            "timestampUTC": .number(Double(timestampUTC)),
            "timestampCurrent": .number(Double(timestampCurrent)),
        ]
    }
}
