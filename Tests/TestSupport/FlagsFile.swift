public import FlagsCore

/// The local flags file (`LocalFlagsFile`): the `getFeatureFlags` response format.
public enum FlagsFile {
    /// The file's text for `flags`.
    public static func text(_ flags: [Flag]) -> String {
        let response: JSONValue = ["flags": .array(flags.map(FakeReply.json(of:))), "partial": false]
        return response.serialized()
    }
}
