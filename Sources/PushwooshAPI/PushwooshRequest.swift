public import FlagsCore
public import FoundationEssentials

/// One call as it goes on the wire: `POST {base}{method}` with the JSON body and headers of docs/behaviour.md,
/// Talking to Pushwoosh.
///
/// Built without I/O so that tests can check every byte. Its description leaves the headers out, because one
/// of them may carry the API token.
public struct PushwooshRequest: Sendable, Equatable, CustomStringConvertible {
    /// The method name, the last path component: `getFeatureFlags`, `postEvent`.
    public var method: String
    /// `{base}{method}`.
    public var url: URL
    /// Header names to values; `Authorization` only when a token is configured.
    public var headers: [String: String]
    /// The whole `request` object, before it is wrapped as `{"request": ...}`.
    public var request: [String: JSONValue]

    /// The method name of the flags call.
    public static let getFeatureFlagsMethod = "getFeatureFlags"
    /// The method name of the event call.
    public static let postEventMethod = "postEvent"

    /// Builds a call to `method` with the common fields plus `extraMembers`.
    public init(
        base: URL, method: String, common: CommonFields, apiToken: String?, extraMembers: [String: JSONValue] = [:]
    ) {
        self.method = method
        self.url = URL(string: base.absoluteString + method) ?? base.appendingPathComponent(method)
        var headers = [
            "Content-Type": "application/json; charset=utf-8",
            "User-Agent": "pwflagsd/\(common.version)",
        ]
        if let apiToken, !apiToken.isEmpty { headers["Authorization"] = "Token \(apiToken)" }
        self.headers = headers
        self.request = common.requestMembers.merging(extraMembers) { _, extra in extra }
    }

    /// A `getFeatureFlags` call: the common fields only.
    public static func getFeatureFlags(base: URL, common: CommonFields, apiToken: String?) -> PushwooshRequest {
        PushwooshRequest(base: base, method: getFeatureFlagsMethod, common: common, apiToken: apiToken)
    }

    /// A `postEvent` call carrying `event`.
    public static func postEvent(
        base: URL, common: CommonFields, apiToken: String?, event: PushwooshEvent
    ) -> PushwooshRequest {
        PushwooshRequest(
            base: base, method: postEventMethod, common: common, apiToken: apiToken, extraMembers: event.requestMembers)
    }

    /// The body: `{"request": {...}}` as compact UTF-8 JSON.
    public var body: [UInt8] {
        var output: [UInt8] = []
        JSONValue.object(["request": .object(request)]).write(to: &output)
        return output
    }

    public var description: String { "POST \(url.absoluteString)" }
}
