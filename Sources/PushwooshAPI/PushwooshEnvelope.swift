public import FlagsCore
public import FoundationEssentials

/// The outer object of every reply: `{"status_code": 200, "status_message": "OK", "response": ..., "base_url": ...}`.
public struct PushwooshEnvelope: Sendable, Equatable {
    /// The `response` member; nil when absent.
    public var response: JSONValue?
    /// `base_url`, only when it is an acceptable https base (R16); a malformed or plain http one is ignored rather
    /// than failing the call.
    public var baseURL: URL?

    /// The largest reply body accepted (docs/behaviour.md, Talking to Pushwoosh): 8 MiB.
    public static let maximumBodyBytes = 8 * 1024 * 1024

    public init(response: JSONValue?, baseURL: URL?) {
        self.response = response
        self.baseURL = baseURL
    }

    /// Decodes the body of an HTTP 200 reply; every failure is status 200 (unusable).
    ///
    /// An envelope whose `status_code` is not 200 fails here; the `base_url` of a failed reply is read by
    /// ``addressSignal(of:)`` from the error's body.
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

    /// What a reply says about the address to call next.
    public enum AddressSignal: Sendable, Equatable {
        /// Nothing: the body is not JSON (an HTML error page, a cut body), or an envelope without an acceptable
        /// `base_url`.
        case none
        /// Pushwoosh's envelope, whatever its `status_code`, names an acceptable https `base_url`.
        case move(URL)
        /// JSON that is not Pushwoosh's envelope (no `status_code`): whoever answered is not Pushwoosh.
        case reset
    }

    /// Reads the address signal of any reply body, a failed one included.
    ///
    /// An envelope is a JSON object with a `status_code` member, whatever its value or the HTTP status: Pushwoosh
    /// sends `base_url` with failed replies too. JSON without `status_code` is some other server's answer.
    public static func addressSignal(of body: [UInt8]) -> AddressSignal {
        guard !body.isEmpty, body.count <= maximumBodyBytes, let value = try? JSONValue(parsing: body) else {
            return .none
        }
        guard let members = value.objectValue, members["status_code"] != nil else { return .reset }
        guard let string = members["base_url"]?.stringValue, PushwooshEndpoint.isAcceptableMove(string),
            let url = URL(string: string)
        else { return .none }
        return .move(url)
    }

    /// Server text shortened so that a hostile reply cannot flood the log.
    static func clipped(_ text: String) -> String {
        text.count > 200 ? String(text.prefix(200)) + "…" : text
    }
}
