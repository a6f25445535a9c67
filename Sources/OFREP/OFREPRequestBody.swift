public import FlagsCore

/// The body of an evaluation request: `{"context": {...}}`, the context optional.
///
/// OFREP marks `context` (and its `targetingKey`) required, but the stock Python provider sends `{}` when the
/// program set no evaluation context, and an empty body asks for the same; both are served. The context does
/// not change the answer: pwflagsd serves Pushwoosh's verdict for this device and its current user.
public struct OFREPRequestBody: Sendable, Equatable {
    public var context: [String: JSONValue]?

    /// What is wrong with a body, as OFREP's error code and details.
    public struct Problem: Error, Sendable, Equatable {
        /// `PARSE_ERROR` or `INVALID_CONTEXT`.
        public var code: String
        public var details: String
    }

    public init(context: [String: JSONValue]? = nil) {
        self.context = context
    }

    /// Reads a request body.
    public static func parse(_ body: [UInt8]) -> Result<OFREPRequestBody, Problem> {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            return .success(OFREPRequestBody())
        }
        let value: JSONValue
        do {
            value = try JSONValue(parsing: body)
        } catch {
            return .failure(Problem(code: "PARSE_ERROR", details: "the body is not JSON: \(error)"))
        }
        guard let members = value.objectValue else {
            return .failure(Problem(code: "PARSE_ERROR", details: "the body is not a JSON object"))
        }
        guard let context = members["context"], !context.isNull else { return .success(OFREPRequestBody()) }
        guard let contextMembers = context.objectValue else {
            return .failure(Problem(code: "INVALID_CONTEXT", details: "context is not an object"))
        }
        if let targetingKey = contextMembers["targetingKey"], targetingKey.stringValue == nil, !targetingKey.isNull {
            return .failure(Problem(code: "INVALID_CONTEXT", details: "targetingKey is not a string"))
        }
        return .success(OFREPRequestBody(context: contextMembers))
    }
}
