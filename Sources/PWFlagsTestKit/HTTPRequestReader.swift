import Glibc

/// Reads one HTTP/1.1 request (request line, headers, Content-Length body) from a socket, defensively.
enum HTTPRequestReader {
    /// What came in.
    enum Outcome {
        case request(RecordedRequest)
        /// Not a request this server takes; answer with this status.
        case malformed(status: Int)
        /// The client left before a whole request arrived.
        case closed
    }

    static let maximumHeadBytes = 64 * 1024
    static let maximumBodyBytes = 16 * 1024 * 1024

    static func read(from fd: Int32) -> Outcome {
        var buffer: [UInt8] = []
        var headEnd: Int?
        while headEnd == nil {
            let received = LoopbackSocket.receive(fd, upTo: 16384)
            guard !received.isEmpty else { return .closed }
            buffer += received
            // A TLS ClientHello (or other binary) never ends a head; refusing it at once lets such a client fail
            // fast instead of waiting for its timeout.
            if let first = buffer.first, !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first) {
                return .malformed(status: 400)
            }
            headEnd = endOfHead(in: buffer)
            if headEnd == nil, buffer.count > maximumHeadBytes { return .malformed(status: 431) }
        }
        guard let headEnd else { return .closed }
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: true)
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else { return .malformed(status: 400) }
        var fields: [RecordedRequest.HeaderField] = []
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { return .malformed(status: 400) }
            let name = String(line[..<colon])
            let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: " \t")
            fields.append(RecordedRequest.HeaderField(name: name, value: value))
        }
        var request = RecordedRequest(
            httpMethod: String(requestLine[0]), path: String(requestLine[1]), headerFields: fields, body: [])
        if request.header("Transfer-Encoding") != nil { return .malformed(status: 501) }
        let length: Int
        if let text = request.header("Content-Length") {
            guard let parsed = Int(text), parsed >= 0 else { return .malformed(status: 400) }
            guard parsed <= maximumBodyBytes else { return .malformed(status: 413) }
            length = parsed
        } else {
            length = 0
        }
        var body = Array(buffer[(headEnd + 4)...])
        while body.count < length {
            let received = LoopbackSocket.receive(fd, upTo: min(65536, length - body.count))
            guard !received.isEmpty else { return .closed }
            body += received
        }
        request.body = Array(body.prefix(length))
        return .request(request)
    }

    /// The index of the blank line's `\r\n\r\n`, when the head is complete.
    private static func endOfHead(in buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }
}

extension String {
    /// The string without leading and trailing characters in `set`.
    fileprivate func trimmingCharacters(in set: String) -> String {
        let scalars = Set(set)
        var slice = Substring(self)
        while let first = slice.first, scalars.contains(first) { slice.removeFirst() }
        while let last = slice.last, scalars.contains(last) { slice.removeLast() }
        return String(slice)
    }
}
