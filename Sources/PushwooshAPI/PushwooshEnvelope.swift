public import FlagsCore
public import FoundationEssentials

/// The outer object of every reply: `{"status_code": 200, "status_message": "OK", "response": ..., "base_url": ...}`.
public struct PushwooshEnvelope: Sendable, Equatable {
    /// The `response` member; nil when absent.
    public var response: JSONValue?
    /// `base_url`, only when it is an acceptable https base (R16); a malformed or plain http one is ignored rather
    /// than failing the call.
    public var baseURL: URL?

    /// The largest reply body accepted (README, Talking to Pushwoosh): 8 MiB.
    public static let maximumBodyBytes = 8 * 1024 * 1024

    public init(response: JSONValue?, baseURL: URL?) {
        self.response = response
        self.baseURL = baseURL
    }

    /// Decodes the body of an HTTP 200 reply; every failure is status 200 (unusable).
    ///
    /// An envelope whose `status_code` is not 200 fails here, so a `base_url` is never taken from a failed reply.
    public static func decode(body: [UInt8]) throws(PushwooshError) -> PushwooshEnvelope {
        guard body.count <= maximumBodyBytes else { throw .unusable("reply over 8 MiB") }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: body)
        } catch {
            throw .unusable("reply is not JSON (\(error))")
        }
        guard let members = value.objectValue, let statusCode = members["status_code"]?.integerValue else {
            throw .unusable("reply has no status_code envelope")
        }
        guard statusCode == 200 else {
            let message = members["status_message"]?.stringValue.map { ": \(Self.clipped($0))" } ?? ""
            throw .unusable("envelope status_code \(statusCode)\(message)")
        }
        let baseURL = members["base_url"]?.stringValue.flatMap { string in
            PushwooshEndpoint.isAcceptableMove(string) ? URL(string: string) : nil
        }
        return PushwooshEnvelope(response: members["response"], baseURL: baseURL)
    }

    /// Server text shortened so that a hostile reply cannot flood the log.
    static func clipped(_ text: String) -> String {
        text.count > 200 ? String(text.prefix(200)) + "…" : text
    }
}
