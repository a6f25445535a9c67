import FlagsCore
import Glibc

/// Writing the scripted replies.
extension FakePushwooshServer {
    func perform(_ reply: FakeReply, on fd: Int32) {
        switch reply {
        case .flags(let flags, let partial, let baseURL):
            let response: JSONValue = ["flags": .array(flags.map(FakeReply.json(of:))), "partial": .bool(partial)]
            sendComplete(
                status: 200, body: FakeReply.envelope(response: response, baseURL: baseURL).serialized(), on: fd)
        case .ok:
            sendComplete(status: 200, body: FakeReply.envelope(response: .null).serialized(), on: fd)
        case .status(let status, let body):
            sendComplete(status: status, body: body, on: fd)
        case .envelopeStatus(let code):
            let envelope: JSONValue = [
                "status_code": .number(Double(code)), "status_message": "Error", "response": nil,
            ]
            sendComplete(status: 200, body: envelope.serialized(), on: fd)
        case .raw(let body):
            sendComplete(status: 200, body: body, on: fd)
        case .delay(let duration, let next):
            // A client that leaves (or stop()) ends the wait early; the reply then goes nowhere, quietly.
            _ = LoopbackSocket.waitForPeer(fd, upTo: duration)
            perform(next, on: fd)
        case .drop:
            return
        case .resetMidBody:
            let body = Array(FakeReply.envelope(response: ["flags": []]).serialized().utf8)
            guard LoopbackSocket.sendAll(fd, Self.head(status: 200, contentLength: body.count + 1000)) else { return }
            _ = LoopbackSocket.sendAll(fd, Array(body.prefix(body.count / 2)))
            LoopbackSocket.reset(fd)
        case .truncated:
            let body = Array(FakeReply.envelope(response: ["flags": []]).serialized().utf8)
            guard LoopbackSocket.sendAll(fd, Self.head(status: 200, contentLength: body.count + 1000)) else { return }
            // The connection closes normally when `serve` returns: the client sees the end of the stream early.
            _ = LoopbackSocket.sendAll(fd, body)
        case .hang:
            // Read until the client leaves or stop() shuts the socket down.
            while !LoopbackSocket.receive(fd, upTo: 4096).isEmpty {}
        case .huge(let bytes):
            sendHuge(bytes: bytes, on: fd)
        case .drip(let bytes, let interval):
            guard LoopbackSocket.sendAll(fd, Self.head(status: 200, contentLength: bytes)) else { return }
            for _ in 0..<bytes {
                if LoopbackSocket.waitForPeer(fd, upTo: interval) { return }
                guard LoopbackSocket.sendAll(fd, [UInt8(ascii: " ")]) else { return }
            }
        case .retryAfterDate(let status, let seconds):
            perform(.retryAfter(status, value: Self.imfFixdate(secondsSinceEpoch: time(nil) + seconds)), on: fd)
        case .retryAfter(let status, let value):
            let body = Array("busy".utf8)
            let head = Self.head(status: status, contentLength: body.count, extraHeaders: ["Retry-After: \(value)"])
            _ = LoopbackSocket.sendAll(fd, head + body)
        case .redirect(let location, let status):
            let head = Self.head(status: status, contentLength: 0, extraHeaders: ["Location: \(location)"])
            _ = LoopbackSocket.sendAll(fd, head)
        }
    }

    /// `seconds` since the epoch as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), English in any locale.
    static func imfFixdate(secondsSinceEpoch seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(1900 + parts.tm_year) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    private func sendComplete(status: Int, body: String, on fd: Int32) {
        let bytes = Array(body.utf8)
        _ = LoopbackSocket.sendAll(fd, Self.head(status: status, contentLength: bytes.count) + bytes)
    }

    /// A valid envelope padded with whitespace, in 64 KiB pieces: if the client did not enforce its limit the
    /// reply would decode, so a test that sees "unusable" proves the limit.
    private func sendHuge(bytes: Int, on fd: Int32) {
        let prefix = Array(FakeReply.envelope(response: ["flags": []]).serialized().utf8)
        let total = max(bytes, prefix.count)
        guard LoopbackSocket.sendAll(fd, Self.head(status: 200, contentLength: total) + prefix) else { return }
        let chunk = [UInt8](repeating: UInt8(ascii: " "), count: 65536)
        var remaining = total - prefix.count
        while remaining > 0 {
            let size = min(remaining, chunk.count)
            guard LoopbackSocket.sendAll(fd, Array(chunk.prefix(size))) else { return }
            remaining -= size
        }
    }

    /// A response head with `Connection: close`.
    static func head(status: Int, contentLength: Int, extraHeaders: [String] = []) -> [UInt8] {
        var lines = [
            "HTTP/1.1 \(status) \(reasonPhrase(status))",
            "Content-Type: application/json; charset=utf-8",
            "Content-Length: \(contentLength)",
            "Connection: close",
        ]
        lines += extraHeaders
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    private static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 404: "Not Found"
        case 429: "Too Many Requests"
        case 413: "Content Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
