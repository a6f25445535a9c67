/// One HTTP/1.x request as the listener's parser read it: the request line, the header fields and a
/// `Content-Length` body.
public struct HTTPRequest: Sendable, Equatable {
    /// The method token, case-sensitive as HTTP says (`POST`, not `post`).
    public var method: String
    /// The path of the request target, still percent-encoded; the query is in `query`.
    public var path: String
    /// What followed `?` in the request target, nil when there was no `?`.
    public var query: String?
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// The header fields in arrival order, names lowercased.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(
        method: String, path: String, query: String? = nil, minorVersion: Int = 1,
        headers: [(name: String, value: String)] = [], body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.minorVersion = minorVersion
        self.headers = headers
        self.body = body
    }

    /// The value of the first field named `name` (lowercase), or nil.
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }

    /// Every value of the fields named `name`, for the list headers (`Connection`, `If-None-Match`).
    public func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name == name }.map(\.value)
    }

    /// Whether the connection stays open after the answer: HTTP/1.1 unless `Connection: close`, HTTP/1.0 only
    /// with `Connection: keep-alive`.
    public var keepsAlive: Bool {
        let tokens = headerValues("connection").flatMap { $0.split(separator: ",") }.map {
            $0.trimmingSpaces.lowercased()
        }
        if minorVersion == 0 { return tokens.contains("keep-alive") }
        return !tokens.contains("close")
    }

    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.path == rhs.path && lhs.query == rhs.query
            && lhs.minorVersion == rhs.minorVersion && lhs.body == rhs.body
            && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

extension Substring {
    /// Without the spaces and tabs HTTP allows around a field value or list element.
    var trimmingSpaces: String {
        var slice = self
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
