public import FlagsCore

/// Answers one parsed HTTP request with OFREP: the routes, the token, the rate verdict, the evaluations.
///
/// Pure: the flags, the token and the rate verdict come in, the answer goes out; the listener does the I/O.
public struct OFREPResponder: Sendable {
    /// The token a client must send (`Authorization: Bearer …` or `X-API-Key: …`); nil: none is asked for.
    public var token: [UInt8]?
    /// The web origins whose pages may read the answers (CORS), compared exactly; empty: no browser access.
    public var allowedOrigins: Set<String>

    public static let bulkPath = "/ofrep/v1/evaluate/flags"
    static let singlePrefix = "/ofrep/v1/evaluate/flags/"

    /// How long a browser may keep a preflight's verdict, in seconds.
    public static let preflightMaxAge = 600

    public init(token: [UInt8]? = nil, allowedOrigins: Set<String> = []) {
        self.token = token
        self.allowedOrigins = allowedOrigins
    }

    /// True when `request` is a CORS preflight from an allowed origin: answered without the token (browsers send
    /// none), and no proof that the client holds it.
    public func isPreflight(_ request: HTTPRequest) -> Bool {
        request.method == "OPTIONS" && request.header("access-control-request-method") != nil
            && request.header("origin").map(allowedOrigins.contains) == true
    }

    /// The endpoint a path asks for, as the metrics label it: `bulk`, `single`, or `other`.
    public static func endpoint(of path: String) -> String {
        if path == bulkPath || path == bulkPath + "/" { return "bulk" }
        return path.hasPrefix(singlePrefix) ? "single" : "other"
    }

    /// The answer to `request`. `admit` is asked once the caller is authenticated and returns nil to serve the
    /// request, or the seconds the caller must wait (429). An allowed origin's answers carry the CORS fields.
    ///
    /// `evaluated` hears of every single evaluation answered: the key asked and the flag that decided it (nil when
    /// there is none), for the daemon's telemetry.
    public func respond(
        to request: HTTPRequest, flags: () -> OFREPFlags, admit: () -> Int?,
        evaluated: ((String, Flag?) -> Void)? = nil
    ) -> HTTPResponse {
        var response = uncorsed(to: request, flags: flags, admit: admit, evaluated: evaluated)
        withCORS(&response, for: request)
        return response
    }

    /// Adds the CORS fields an allowed origin's page needs to read `response`; nothing for any other origin. With
    /// origins configured, every answer says `Vary: Origin`, so that no cache hands one origin's answer to another.
    public func withCORS(_ response: inout HTTPResponse, for request: HTTPRequest) {
        guard !allowedOrigins.isEmpty else { return }
        response.headers.append(("Vary", "Origin"))
        guard let origin = request.header("origin"), allowedOrigins.contains(origin) else { return }
        response.headers.append(("Access-Control-Allow-Origin", origin))
        response.headers.append(("Access-Control-Expose-Headers", "ETag, Retry-After"))
    }

    private func uncorsed(
        to request: HTTPRequest, flags: () -> OFREPFlags, admit: () -> Int?, evaluated: ((String, Flag?) -> Void)?
    ) -> HTTPResponse {
        if isPreflight(request) {
            // The same answer for every path and every requested method or field: a preflight learns nothing
            // about the flags, the endpoints or the token.
            return HTTPResponse(
                status: 204,
                headers: [
                    ("Access-Control-Allow-Methods", "GET, POST"),
                    (
                        "Access-Control-Allow-Headers",
                        "Authorization, X-API-Key, Content-Type, If-None-Match, Last-Event-ID"
                    ),
                    ("Access-Control-Max-Age", String(Self.preflightMaxAge)),
                ])
        }
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
            guard case .body(let body, let tag) = current.bulk else {
                return Self.error(
                    500,
                    details:
                        "the bulk answer would be larger than the listener sends in one answer; evaluate flags one "
                        + "at a time under \(Self.singlePrefix){key}")
            }
            if tag.isMatched(byIfNoneMatch: request.headerValues("if-none-match")) {
                return HTTPResponse(status: 304, headers: [("ETag", tag.quoted)])
            }
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "application/json"), ("ETag", tag.quoted)], body: body)
        }
        evaluated?(key, current.flag(deciding: key))
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

    /// Equal bytes, compared in time that depends only on the lengths; different lengths are never equal (the
    /// length difference is kept whole, not folded into a byte that 256 extra bytes would bring back to zero).
    static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        var difference: UInt8 = 0
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? left[index] : 0
            let b = index < right.count ? right[index] : 0
            difference |= a ^ b
        }
        return difference == 0 && left.count == right.count
    }

    /// The path segment with `%XX` decoded, or nil when an escape is malformed, the bytes are not UTF-8 or
    /// nothing is left.
    static func percentDecoded(_ text: Substring) -> String? {
        guard let decoded = PercentDecoding.decoded(text), !decoded.isEmpty else { return nil }
        return decoded
    }
}
