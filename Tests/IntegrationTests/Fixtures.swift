import FlagsCore

/// The flags the integration tests serve, in the shape of config/demo-flags.json.
enum Fixtures {
    static let newCheckout = Flag(
        key: "new_checkout",
        isEnabled: true,
        ruleId: "r_1a2b3c4d",
        properties: [
            "button_color": "green", "max_items": 5, "express": true, "layout": ["columns": 2],
            "steps": ["cart", "pay"],
        ]
    )
    static let searchV2 = Flag(
        key: "search_v2", isEnabled: true, ruleId: "default", properties: ["results_per_page": 20])
    static let darkMode = Flag(key: "dark_mode", isEnabled: false, ruleId: "r_5e6f7a8b", properties: ["theme": "light"])
    static let holidayBanner = Flag(
        key: "holiday_banner",
        isEnabled: false,
        ruleId: "",
        properties: ["text": "Happy holidays", "dismissible": true]
    )
    /// Differs from `newCheckout` only in the case of its key (R2).
    static let newCheckoutUpper = Flag(key: "New_Checkout", isEnabled: false, ruleId: "r_upper")

    static let all = [newCheckout, searchV2, darkMode, holidayBanner, newCheckoutUpper]

    /// The wire objects of `flags`, sorted by key as `getAll` returns them.
    static func wire(_ flags: [Flag]) -> JSONValue {
        .array(flags.sorted { $0.key < $1.key }.map(wireValue))
    }

    /// The flag object of PROTOCOL.md.
    static func wireValue(_ flag: Flag) -> JSONValue {
        [
            "key": .string(flag.key), "enabled": .bool(flag.isEnabled), "ruleId": .string(flag.ruleId),
            "properties": .object(flag.properties),
        ]
    }
}
