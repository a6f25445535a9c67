public import FlagsCore
public import Foundation

/// A successful `getFeatureFlags` reply: the flags, whether they are partial, and a new base if one was sent.
public struct FeatureFlagsReply: Sendable, Equatable {
    /// The flags, keys unique.
    public var flags: [Flag]
    /// True when segments were not determined in time (R13): serve, never store.
    public var partial: Bool
    /// The reply's `base_url`, when it sent an acceptable one; later calls go there unless `ServerURL` is set.
    public var baseURL: URL?

    public init(flags: [Flag], partial: Bool, baseURL: URL?) {
        self.flags = flags
        self.partial = partial
        self.baseURL = baseURL
    }

    /// Decodes the body of an HTTP 200 reply to `getFeatureFlags`.
    ///
    /// A missing or non-object `response` is unusable: only an explicit `response` without `flags` means "no
    /// flags", so that a proxy's bare `{"status_code": 200}` cannot wipe the stored flags.
    public static func decode(body: [UInt8]) throws(PushwooshError) -> FeatureFlagsReply {
        let envelope = try PushwooshEnvelope.decode(body: body)
        guard let response = envelope.response, response.objectValue != nil else {
            throw .unusable("reply has no response object")
        }
        let decoded = try FeatureFlagsResponse.decode(responseObject: response)
        return FeatureFlagsReply(flags: decoded.flags, partial: decoded.partial, baseURL: envelope.baseURL)
    }
}
