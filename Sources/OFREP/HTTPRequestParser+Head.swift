extension HTTPRequestParser {
    /// Parses a request head (without its empty line) into the request and its body's length.
    static func parseHead(_ head: [UInt8], maximumBodyBytes: Int) -> Result<(HTTPRequest, Int), HTTPFailure> {
        var lines = head.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            line.last == 0x0D ? line.dropLast() : line
        }
        guard !lines.isEmpty else { return .failure(HTTPFailure(400, "empty request")) }
        let requestLine = lines.removeFirst()
        var request: HTTPRequest
        switch parseRequestLine(requestLine) {
        case .success(let parsed): request = parsed
        case .failure(let failure): return .failure(failure)
        }
        guard lines.count <= maximumFields else {
            return .failure(HTTPFailure(431, "more than \(maximumFields) header fields"))
        }
        for line in lines {
            switch parseField(line) {
            case .success(let field): request.headers.append(field)
            case .failure(let failure): return .failure(failure)
            }
        }
        if !request.headerValues("transfer-encoding").isEmpty {
            return .failure(HTTPFailure(501, "Transfer-Encoding is not supported; send the body with Content-Length"))
        }
        // Every element counts: an empty field or an empty element of a list (`,2`, `2,,2`) is invalid, not
        // skipped, so that no two readers of the request can disagree on its length.
        let lengths = request.headerValues("content-length").flatMap {
            $0.split(separator: ",", omittingEmptySubsequences: false)
        }.map { Substring($0).trimmingSpaces }
        var length = 0
        if let first = lengths.first {
            guard lengths.allSatisfy({ $0 == first }), !first.isEmpty, first.utf8.allSatisfy(isDigit) else {
                return .failure(HTTPFailure(400, "invalid Content-Length"))
            }
            guard first.utf8.count <= 12, let value = Int(first), value <= maximumBodyBytes else {
                return .failure(HTTPFailure(413, "the body is over \(maximumBodyBytes) bytes"))
            }
            length = value
        }
        if let expect = request.header("expect"), expect.lowercased() != "100-continue" {
            return .failure(HTTPFailure(417, "only Expect: 100-continue is understood"))
        }
        return .success((request, length))
    }

    private static func parseRequestLine(_ line: ArraySlice<UInt8>) -> Result<HTTPRequest, HTTPFailure> {
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(isTokenByte), !parts[1].isEmpty,
            parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else {
            return .failure(HTTPFailure(400, "malformed request line"))
        }
        let version = Array(parts[2])
        let minor: Int
        switch version {
        case Array("HTTP/1.1".utf8): minor = 1
        case Array("HTTP/1.0".utf8): minor = 0
        default:
            let looksLikeHTTP =
                version.count == 8 && version.starts(with: "HTTP/".utf8) && isDigit(version[5]) && version[6] == 0x2E
                && isDigit(version[7])
            return .failure(
                looksLikeHTTP
                    ? HTTPFailure(505, "only HTTP/1.1 and HTTP/1.0 are served")
                    : HTTPFailure(400, "malformed HTTP version"))
        }
        var target = String(decoding: parts[1], as: UTF8.self)
        if !target.hasPrefix("/") {
            // The absolute form (`http://host/path`) that proxies send: the path is what counts here.
            let lowered = target.lowercased()
            guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
                return .failure(HTTPFailure(400, "the request target is not a path"))
            }
            let rest = target.drop { $0 != ":" }.dropFirst(3)
            target = rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? "/"
        }
        var path = target
        var query: String?
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            query = String(target[target.index(after: mark)...])
        }
        return .success(
            HTTPRequest(
                method: String(decoding: parts[0], as: UTF8.self), path: path, query: query, minorVersion: minor))
    }

    private static func parseField(_ line: ArraySlice<UInt8>) -> Result<(name: String, value: String), HTTPFailure> {
        guard let first = line.first, first != 0x20, first != 0x09 else {
            return .failure(HTTPFailure(400, "folded or empty header line"))
        }
        guard let colon = line.firstIndex(of: 0x3A) else {
            return .failure(HTTPFailure(400, "header line without a colon"))
        }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
            return .failure(HTTPFailure(400, "invalid header field name"))
        }
        let value = line[(colon + 1)...]
        guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
            return .failure(HTTPFailure(400, "control character in a header field value"))
        }
        let text = Substring(String(decoding: value, as: UTF8.self)).trimmingSpaces
        return .success((String(decoding: name, as: UTF8.self).lowercased(), text))
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// RFC 9110's `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
