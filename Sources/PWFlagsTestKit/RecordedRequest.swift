public import FlagsCore

/// One HTTP request the fake server received, as it arrived.
public struct RecordedRequest: Sendable, Equatable {
    /// One header line, name as sent.
    public struct HeaderField: Sendable, Equatable {
        public var name: String
        public var value: String
    }

    /// The HTTP method, such as `POST`.
    public var httpMethod: String
    /// The request target, such as `/json/1.3/getFeatureFlags`.
    public var path: String
    /// Every header line in order.
    public var headerFields: [HeaderField]
    /// The raw body.
    public var body: [UInt8]
    /// Which connection the server accepted it on, counted from 1: the order the client connected in. The
    /// server reads each connection on its own thread, so the order of `requests` is the order their bytes were
    /// read, which a loaded machine can swap for requests sent close together.
    public var connection = 0

    /// The Pushwoosh method: the last path component, without any query.
    public var apiMethod: String {
        let withoutQuery = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return withoutQuery.split(separator: "/").last.map(String.init) ?? ""
    }

    /// The body as JSON, when it parses.
    public var json: JSONValue? { try? JSONValue(parsing: body) }

    /// The members of the body's `request` object, when there is one.
    public var requestObject: [String: JSONValue]? { json?["request"]?.objectValue }

    /// The value of the first header named `name`, compared without case; nil when absent.
    public func header(_ name: String) -> String? {
        headerFields.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Every header name, lowercased.
    public var headerNames: Set<String> { Set(headerFields.map { $0.name.lowercased() }) }
}
