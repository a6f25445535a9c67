/// One answer of the listener, written as HTTP/1.1 with a `Content-Length` (never chunked).
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    /// Fields besides `Content-Length` and `Connection`, which `serialized` writes itself.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of the first field named `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The bytes on the wire; `closing` adds `Connection: close`.
    public func serialized(closing: Bool) -> [UInt8] {
        var bytes = head(closing: closing)
        if status != 304, status != 204 { bytes += body }
        return bytes
    }

    /// The status line and header fields with their empty line: what precedes `body` on the wire. Sent apart
    /// from the body, so that a body shared by many answers (the bulk evaluation) is never copied.
    public func head(closing: Bool) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        // 304 carries no body, and RFC 9110 lets it leave out Content-Length; 204 must leave it out; every other
        // answer states it, so that the client knows where the next answer starts.
        if status != 304, status != 204 { text += "Content-Length: \(body.count)\r\n" }
        if closing { text += "Connection: close\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// `100 Continue`, the interim answer to `Expect: 100-continue`.
    public static let continueBytes = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 417: "Expectation Failed"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status"
        }
    }

    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}
