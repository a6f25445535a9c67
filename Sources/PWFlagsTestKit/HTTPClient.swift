public import FlagsCore
import Foundation
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal HTTP/1.1 client for the OFREP tests and the bench: one connection (Unix socket or loopback
/// TCP), requests written as given, answers read by their `Content-Length`.
public final class HTTPClient {
    /// One answer as read off the wire.
    public struct Response: Sendable {
        public var status: Int
        /// Header fields, names lowercased.
        public var headers: [String: String]
        public var body: [UInt8]

        /// The body parsed as JSON, or nil.
        public var json: JSONValue? { try? JSONValue(parsing: body) }
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public let fd: Int32
    private var buffer: [UInt8] = []
    /// One read's room, allocated once: the bench reads large answers many times.
    private var chunk = [UInt8](repeating: 0, count: 262_144)

    public init(unixSocket path: String) throws {
        BrokenPipe.ignore()
        fd = try UnixSocket.connect(to: path)
    }

    public init(port: UInt16, host: String = "127.0.0.1") throws {
        BrokenPipe.ignore()
        fd = try InetSocket.connect(host: host, port: port)
    }

    deinit {
        close(fd)
    }

    /// Sends bytes as they are; false when the server is gone.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        (try? UnixSocket.sendAll(fd, bytes)) != nil
    }

    /// Sends text as it is.
    @discardableResult
    public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// The bytes of a POST with a JSON body and the given extra header lines.
    public static func post(_ path: String, body: String = "{}", headers: [String] = []) -> String {
        var text = "POST \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        for header in headers { text += header + "\r\n" }
        return text + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
    }

    /// Posts to `path` and reads the answer.
    public func post(_ path: String, body: String = "{}", headers: [String] = [], timeout: Duration = .seconds(10))
        -> Response?
    {
        guard send(Self.post(path, body: body, headers: headers)) else { return nil }
        return readResponse(timeout: timeout)
    }

    /// The next answer; nil when the connection closed first or `timeout` passed. `100 Continue` is skipped
    /// unless `interim`.
    public func readResponse(timeout: Duration = .seconds(10), interim: Bool = false) -> Response? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let response = takeResponse() {
                if response.status == 100, !interim { continue }
                return response
            }
            guard LineReader.waitReadable(fd, until: deadline) else { return nil }
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            buffer += chunk[0..<count]
        }
    }

    /// True when the server closed the connection within `timeout` (reads and drops what comes first).
    public func isClosedByPeer(timeout: Duration = .seconds(10)) -> Bool {
        LineReader.isClosedByPeer(fd, timeout: timeout)
    }

    private func takeResponse() -> Response? {
        guard let end = Self.headEnd(buffer) else { return nil }
        let head = String(decoding: buffer[0..<end], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let length = status == 304 || status == 100 ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        guard buffer.count >= end + 4 + length else { return nil }
        let body = Array(buffer[(end + 4)..<(end + 4 + length)])
        buffer.removeFirst(end + 4 + length)
        return Response(status: status, headers: headers, body: body)
    }

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 0x0D && bytes[index + 1] == 0x0A && bytes[index + 2] == 0x0D && bytes[index + 3] == 0x0A {
            return index
        }
        return nil
    }
}
