public import FlagsCore
import Foundation
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A Server-Sent Events client for the OFREP event stream tests and the bench: one connection, one `GET`, then
/// the stream read block by block as the SSE format defines it.
public final class EventStreamClient {
    /// One block of the stream: an event's fields, or comments only (a heartbeat).
    public struct Block: Sendable, Equatable {
        public var id: String?
        public var event: String?
        public var data: String?
        public var retry: Int?
        public var comments: [String] = []

        /// The `data` field parsed as JSON, or nil.
        public var json: JSONValue? { data.flatMap { try? JSONValue(parsing: Array($0.utf8)) } }
        /// The block as the protocol's `sseEvent` schema describes it: the fields present, `retry` a number.
        public var schemaObject: JSONValue {
            var members: [String: JSONValue] = [:]
            if let id { members["id"] = .string(id) }
            if let event { members["event"] = .string(event) }
            if let data { members["data"] = .string(data) }
            if let retry { members["retry"] = .number(Double(retry)) }
            return .object(members)
        }
    }

    public let fd: Int32
    private var buffer: [UInt8] = []
    /// The answer's status and header fields (names lowercased), once `open` read them.
    public private(set) var status = 0
    public private(set) var headers: [String: String] = [:]

    public init(unixSocket path: String) throws {
        BrokenPipe.ignore()
        fd = try UnixSocket.connect(to: path)
    }

    /// `receiveBuffer`: a small `SO_RCVBUF` set before connecting, for a reader that falls behind quickly.
    public init(port: UInt16, host: String = "127.0.0.1", receiveBuffer: Int32? = nil) throws {
        BrokenPipe.ignore()
        fd = try InetSocket.connect(host: host, port: port, receiveBuffer: receiveBuffer)
    }

    deinit {
        close(fd)
    }

    /// Sends bytes as they are; false when the server is gone.
    @discardableResult
    public func send(_ text: String) -> Bool {
        (try? UnixSocket.sendAll(fd, Array(text.utf8))) != nil
    }

    /// Sends `GET target` with `headers` and reads the answer's head; the status, or nil when the connection
    /// closed first or `timeout` passed.
    @discardableResult
    public func open(_ target: String, headers extra: [String] = [], timeout: Duration = .seconds(10)) -> Int? {
        var text = "GET \(target) HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n"
        for header in extra { text += header + "\r\n" }
        guard (try? UnixSocket.sendAll(fd, Array((text + "\r\n").utf8))) != nil else { return nil }
        let deadline = ContinuousClock.now + timeout
        while true {
            if let end = Self.find([0x0D, 0x0A, 0x0D, 0x0A], in: buffer) {
                let head = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let code = Int(statusLine[1]) else { return nil }
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                        in: .whitespaces)
                }
                status = code
                return code
            }
            guard fill(until: deadline) else { return nil }
        }
    }

    /// The body bytes read so far past the head (a refusal's JSON), after waiting up to `timeout` for the
    /// connection to close.
    public func remainingBody(timeout: Duration = .seconds(5)) -> String {
        let deadline = ContinuousClock.now + timeout
        while fill(until: deadline) {}
        return String(decoding: buffer, as: UTF8.self)
    }

    /// The next block (an event or a heartbeat); nil when the stream ended or `timeout` passed.
    public func next(timeout: Duration = .seconds(10)) -> Block? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let end = Self.find([0x0A, 0x0A], in: buffer) {
                let text = String(decoding: buffer[0..<end], as: UTF8.self)
                buffer.removeFirst(end + 2)
                return Self.block(text)
            }
            guard fill(until: deadline) else { return nil }
        }
    }

    /// The next block that is an event (heartbeats and a `retry`-only block are skipped).
    public func nextEvent(timeout: Duration = .seconds(10)) -> Block? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero, let block = next(timeout: left) else { return nil }
            if block.data != nil { return block }
        }
    }

    /// True when the server closed the stream within `timeout` (reads and drops what comes first).
    public func isClosedByPeer(timeout: Duration = .seconds(10)) -> Bool {
        LineReader.isClosedByPeer(fd, timeout: timeout)
    }

    private func fill(until deadline: ContinuousClock.Instant) -> Bool {
        guard LineReader.waitReadable(fd, until: deadline) else { return false }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return false }
        buffer += chunk[0..<count]
        return true
    }

    static func block(_ text: String) -> Block {
        var block = Block()
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") {
                block.comments.append(String(line.dropFirst()).trimmingCharacters(in: .whitespaces))
                continue
            }
            let name: Substring
            var value: Substring = ""
            if let colon = line.firstIndex(of: ":") {
                name = line[..<colon]
                value = line[line.index(after: colon)...]
                if value.first == " " { value = value.dropFirst() }
            } else {
                name = line
            }
            switch name {
            case "id": block.id = String(value)
            case "event": block.event = String(value)
            case "data": block.data = block.data.map { $0 + "\n" + value } ?? String(value)
            case "retry": block.retry = Int(value)
            default: break
            }
        }
        return block
    }

    static func find(_ needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        for index in 0...(bytes.count - needle.count) where bytes[index..<(index + needle.count)].elementsEqual(needle)
        {
            return index
        }
        return nil
    }
}
