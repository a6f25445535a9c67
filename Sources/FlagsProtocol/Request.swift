public import FlagsCore

/// One request line, its envelope checked: a method, its params and the id to echo (nil for a notification).
public struct Request: Sendable, Equatable {
    /// The id to echo back; nil when the request is a notification and gets no answer.
    public var id: JSONValue?
    public var method: String
    public var params: [String: JSONValue]

    public init(id: JSONValue?, method: String, params: [String: JSONValue] = [:]) {
        self.id = id
        self.method = method
        self.params = params
    }

    /// A request that failed before it could be carried out, with the id to answer it under.
    public struct Failure: Error, Sendable, Equatable {
        /// The request's id when it could be read, else null; nil when it was a notification.
        public var id: JSONValue?
        public var error: RPCError
    }

    /// Decodes a line (without its newline) into a request, or the error to answer with.
    public static func decode(_ line: some Collection<UInt8>) -> Result<Request, Failure> {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: Array(line))
        } catch {
            return .failure(Failure(id: .null, error: .parseError(error.description)))
        }
        return decode(value)
    }

    /// Checks the envelope of an already parsed line.
    public static func decode(_ value: JSONValue) -> Result<Request, Failure> {
        guard let object = value.objectValue else {
            return .failure(Failure(id: .null, error: .invalidRequest("a request is a JSON object")))
        }
        let id: JSONValue?
        switch object["id"] {
        case .none: id = nil
        case .string(let text)?: id = .string(text)
        case .number(let number)?: id = .number(number)
        case .some:
            return .failure(Failure(id: .null, error: .invalidRequest("id must be a string or a number")))
        }
        // A request whose envelope is broken is answered even without an id: the caller must learn of it.
        let answerID = id ?? .null
        if let version = object["jsonrpc"], version != .string("2.0") {
            return .failure(Failure(id: answerID, error: .invalidRequest("jsonrpc must be \"2.0\"")))
        }
        guard let method = object["method"]?.stringValue else {
            return .failure(Failure(id: answerID, error: .invalidRequest("method must be a string")))
        }
        var params: [String: JSONValue] = [:]
        switch object["params"] {
        case .none, .null?: break
        case .object(let members)?: params = members
        case .some:
            return .failure(Failure(id: answerID, error: .invalidParams("params", "must be an object")))
        }
        return .success(Request(id: id, method: method, params: params))
    }

    /// The request line, newline included.
    public func encoded() -> [UInt8] {
        var members: [String: JSONValue] = ["jsonrpc": "2.0", "method": .string(method)]
        if let id { members["id"] = id }
        if !params.isEmpty { members["params"] = .object(params) }
        var output: [UInt8] = []
        JSONValue.object(members).write(to: &output)
        output.append(UInt8(ascii: "\n"))
        return output
    }
}
