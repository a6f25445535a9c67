public import FlagsCore

/// Local flags files (`LocalFlagsFile`) in the `getFeatureFlags` `response` shape, and configurations serving them.
public enum LocalFlags {
    /// The file's name inside a daemon's temporary directory.
    public static let fileName = "flags.json"

    /// The file text for `flags`.
    public static func text(_ flags: [Flag], partial: Bool = false) -> String {
        let entries: [JSONValue] = flags.map { flag in
            [
                "key": .string(flag.key),
                "enabled": .bool(flag.isEnabled),
                "rule_id": .string(flag.ruleId),
                "properties": .object(flag.properties),
            ]
        }
        let response: JSONValue = ["flags": .array(entries), "partial": .bool(partial)]
        return response.serialized()
    }

    /// A configuration serving `directory/flags.json`, followed by `extra` lines.
    public static func config(in directory: TemporaryDirectory, extra: String = "") -> String {
        "[FeatureFlags]\nLocalFlagsFile=\(directory.file(fileName))\n" + extra
    }
}
