import FlagsCore

/// Answers one parsed HTTP request with OFREP: the routes, the token, the rate verdict, the evaluations.
///
/// Pure: the flags, the token and the rate verdict come in, the answer goes out; the listener does the I/O.
public struct OFREPResponder: Sendable {
    /// The token a client must send (`Authorization: Bearer …` or `X-API-Key: …`); nil: none is asked for.
    public var token: [UInt8]?

    public static let bulkPath = "/ofrep/v1/evaluate/flags"
    static let singlePrefix = "/ofrep/v1/evaluate/flags/"

    public init(token: [UInt8]? = nil) {
        self.token = token
    }

    /// The answer to `request`. `admit` is asked once the caller is authenticated and returns nil to serve the
    /// request, or the seconds the caller must wait (429).
    /// The endpoint a path asks for, as the metrics label it: `bulk`, `single`, or `other`.
    public static func endpoint(of path: String) -> String {
        if path == bulkPath || path == bulkPath + "/" { return "bulk" }
        return path.hasPrefix(singlePrefix) ? "single" : "other"
    }

    public func respond(to request: HTTPRequest, flags: () -> OFREPFlags, admit: () -> Int?) -> HTTPResponse {
        if let token, !Self.presents(token, in: request) {
            return Self.error(
                401, details: "missing or wrong token: send Authorization: Bearer <token> or X-API-Key: <token>",
                headers: [("WWW-Authenticate", "Bearer")])
        }
        if let seconds = admit() {
            return Self.error(
                429, details: "too many requests; retry after \(seconds) s", headers: [("Retry-After", String(seconds))]
            )
        }
        let key: String?
        if request.path == Self.bulkPath || request.path == Self.bulkPath + "/" {
            key = nil
        } else if request.path.hasPrefix(Self.singlePrefix) {
            guard let decoded = Self.percentDecoded(request.path.dropFirst(Self.singlePrefix.count)) else {
                return Self.error(400, details: "the flag key in the path is not valid percent-encoded UTF-8")
            }
            key = decoded
        } else {
            return Self.error(404, details: "no such endpoint; OFREP is served under \(Self.bulkPath)")
        }
        guard request.method == "POST" else {
            return Self.error(405, details: "OFREP evaluations are POST requests", headers: [("Allow", "POST")])
        }
        if case .failure(let problem) = OFREPRequestBody.parse(request.body) {
            var members: [String: JSONValue] = [
                "errorCode": .string(problem.code), "errorDetails": .string(problem.details),
            ]
            if let key { members["key"] = .string(key) }
            return Self.json(400, .object(members))
        }
        let current = flags()
        guard let key else {
            if current.bulkETag.isMatched(byIfNoneMatch: request.headerValues("if-none-match")) {
                return HTTPResponse(status: 304, headers: [("ETag", current.bulkETag.quoted)])
            }
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "application/json"), ("ETag", current.bulkETag.quoted)],
                body: current.bulkBody)
        }
        guard let evaluation = current.evaluation(of: key) else {
            return Self.json(
                404,
                [
                    "key": .string(key), "errorCode": "FLAG_NOT_FOUND",
                    "errorDetails": .string("flag '\(key)' was not found"),
                ])
        }
        var body: [UInt8] = []
        evaluation.write(to: &body)
        let tag = EntityTag(digestOf: body)
        if tag.isMatched(byIfNoneMatch: request.headerValues("if-none-match")) {
            return HTTPResponse(status: 304, headers: [("ETag", tag.quoted)])
        }
        return HTTPResponse(
            status: 200, headers: [("Content-Type", "application/json"), ("ETag", tag.quoted)], body: body)
    }

    /// The answer to a request the parser refused.
    public static func refusal(_ failure: HTTPFailure) -> HTTPResponse {
        error(failure.status, details: failure.reason)
    }

    /// OFREP's general error body, `{"errorDetails": …}`.
    public static func error(_ status: Int, details: String, headers: [(name: String, value: String)] = [])
        -> HTTPResponse
    {
        var response = json(status, ["errorDetails": .string(details)])
        response.headers += headers
        return response
    }

    static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        var body: [UInt8] = []
        value.write(to: &body)
        return HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: body)
    }

    /// True when the request carries `token`, compared in time that does not depend on where it differs.
    static func presents(_ token: [UInt8], in request: HTTPRequest) -> Bool {
        var offered: [String] = request.headerValues("x-api-key")
        for value in request.headerValues("authorization") {
            let parts = value.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                offered.append(Substring(parts[1]).trimmingSpaces)
            }
        }
        var found = false
        for candidate in offered where constantTimeEqual(Array(candidate.utf8), token) { found = true }
        return found
    }

    static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: left.count ^ right.count)
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? left[index] : 0
            let b = index < right.count ? right[index] : 0
            difference |= a ^ b
        }
        return difference == 0
    }

    /// The path segment with `%XX` decoded, or nil when an escape is malformed or the bytes are not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        guard !bytes.isEmpty else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
