import Foundation
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Makes many calls of one kind (`FloodCall`) as fast as the daemon answers them, and counts the answers.
///
/// What the memory checks stand on: a call that keeps memory once answered shows as the daemon's anonymous memory
/// growing with the count. Line calls are written `window` ahead of their answers on one connection (the daemon
/// takes one at a time and the rest wait in the socket), bus calls are sd-bus round trips, OFREP requests are
/// keep-alive HTTP/1.1 exchanges.
public enum CallFlood {
    /// What the calls got.
    public struct Tally: Sendable, CustomStringConvertible {
        /// Calls that got an answer (a result or an error); for `hangUp`, calls written.
        public var answered = 0
        /// Answers that were errors: a JSON-RPC or D-Bus error, an HTTP status of 400 or more.
        public var errors = 0
        /// The first error's text, for the log of a check that expected none.
        public var firstError: String?

        public var description: String {
            "\(answered) answered, \(errors) errors" + (firstError.map { " (first: \($0))" } ?? "")
        }

        init() {}

        /// The tally `pwflags-bench --flood` printed (its `description`), for a flood made as another user.
        public init?(printed: String) {
            let words = printed.split(separator: " ", maxSplits: 4)
            guard words.count >= 4, let answered = Int(words[0]), let errors = Int(words[2]) else { return nil }
            self.answered = answered
            self.errors = errors
            if words.count == 5 { firstError = String(words[4].dropFirst("(first: ".count).dropLast()) }
        }

        mutating func count(error: String?) {
            answered += 1
            guard let error else { return }
            errors += 1
            if firstError == nil { firstError = String(error.prefix(300)) }
        }
    }

    public enum Failure: Error, CustomStringConvertible {
        /// The daemon stopped answering: the connection closed, or no answer came within the timeout.
        case noAnswer(call: String, after: Int)
        case bus(String)

        public var description: String {
            switch self {
            case .noAnswer(let call, let after): "\(call): no answer after \(after) calls"
            case .bus(let message): message
            }
        }
    }

    /// Calls written ahead of their answers on a pipelined connection.
    static let window = 32

    /// `count` calls of `call` at `address`: the line or OFREP socket's path, or the bus's address.
    public static func run(_ call: FloodCall, count: Int, at address: String) throws -> Tally {
        switch call.surface {
        case .line: try line(call, count: count, socketPath: address)
        case .ofrep: try ofrep(call, count: count, socketPath: address)
        case .varlink: try varlink(call, count: count, socketPath: address)
        case .bus: try BusCaller(address: address).flood(call, count: count)
        }
    }

    /// Whether the daemon owns its name on the bus at `address` within `timeout`.
    public static func waitForBusName(at address: String, timeout: Duration = .seconds(20)) throws -> Bool {
        try BusCaller(address: address).waitForDaemon(timeout: timeout)
    }

    private static func payload(_ call: FloodCall, _ index: Int, newline: Bool) -> [UInt8] {
        let text = call.payload.replacingOccurrences(of: "%N%", with: String(index % 2))
        return Array((newline ? text + "\n" : text).utf8)
    }

    private static func line(_ call: FloodCall, count: Int, socketPath: String) throws -> Tally {
        var tally = Tally()
        func classify(_ line: String) {
            // The members are in the daemon's order: jsonrpc, id, then result or error.
            let error = line.range(of: #""error":"#)?.lowerBound
            let result = line.range(of: #""result":"#)?.lowerBound
            let isError = error.map { error in result.map { error < $0 } ?? true } ?? false
            tally.count(error: isError ? line : nil)
        }
        switch call.manner {
        case .pipelined:
            let client = try RawClient(socketPath: socketPath)
            var sent = 0
            while sent < count {
                let batch = min(window, count - sent)
                var bytes: [UInt8] = []
                for index in sent..<(sent + batch) { bytes += payload(call, index, newline: true) }
                try client.send(bytes)
                for _ in 0..<batch {
                    guard let answer = client.readLine() else { throw Failure.noAnswer(call: call.name, after: sent) }
                    classify(answer)
                }
                sent += batch
            }
        case .connectionEach:
            for index in 0..<count {
                let client = try RawClient(socketPath: socketPath)
                try client.send(payload(call, index, newline: true))
                guard let answer = client.readLine() else { throw Failure.noAnswer(call: call.name, after: index) }
                classify(answer)
            }
        case .hangUp:
            for index in 0..<count {
                let client = try RawClient(socketPath: socketPath)
                // Past MaxConnections the daemon closes at once, and the write may find the connection gone.
                let sent = (try? client.send(payload(call, index, newline: true))) != nil
                tally.count(error: sent ? nil : "the daemon closed the connection first")
            }
        }
        return tally
    }

    /// Varlink's messages end with a NUL byte; a reply is an error when it names one (`"error":` before
    /// `"parameters":`, as the daemon writes them).
    private static func varlink(_ call: FloodCall, count: Int, socketPath: String) throws -> Tally {
        var tally = Tally()
        var reader: NULReader?
        for index in 0..<count {
            if reader == nil || call.manner != .pipelined { reader = try NULReader(socketPath: socketPath) }
            guard let connection = reader else { break }
            let sent = (try? connection.send(payload(call, index, newline: false) + [0])) != nil
            if call.manner == .hangUp {
                tally.count(error: sent ? nil : "the daemon closed the connection first")
                continue
            }
            guard sent, let reply = connection.read() else { throw Failure.noAnswer(call: call.name, after: index) }
            let error = reply.range(of: #""error":"#)?.lowerBound
            let parameters = reply.range(of: #""parameters":"#)?.lowerBound
            let isError = error.map { error in parameters.map { error < $0 } ?? true } ?? false
            tally.count(error: isError ? reply : nil)
        }
        return tally
    }

    private static func ofrep(_ call: FloodCall, count: Int, socketPath: String) throws -> Tally {
        var tally = Tally()
        var client: HTTPClient?
        for index in 0..<count {
            if client == nil || call.manner != .pipelined { client = try HTTPClient(unixSocket: socketPath) }
            guard let connection = client else { break }
            let sent = connection.send(payload(call, index, newline: false))
            if call.manner == .hangUp {
                // Past the connection limit the listener answers 503 and closes before the request is written.
                tally.count(error: sent ? nil : "the listener closed the connection first")
                continue
            }
            guard sent, let response = connection.readResponse() else {
                throw Failure.noAnswer(call: call.name, after: index)
            }
            tally.count(error: response.status >= 400 ? "HTTP \(response.status) \(response.text)" : nil)
            // A refusal that closes the connection (503 past the limit) is followed by a new one.
            if response.headers["connection"] == "close" { client = nil }
        }
        return tally
    }
}

/// A Varlink client's connection: messages written as given, replies read up to their NUL byte.
private final class NULReader {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(socketPath: String) throws {
        BrokenPipe.ignore()
        fd = try UnixSocket.connect(to: socketPath)
    }

    deinit {
        close(fd)
    }

    func send(_ bytes: [UInt8]) throws {
        try UnixSocket.writeAll(fd, bytes)
    }

    /// The next reply without its NUL; nil when the connection closed or 10 s passed.
    func read() -> String? {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            if let end = buffer.firstIndex(of: 0) {
                let reply = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeSubrange(...end)
                return reply
            }
            guard LineReader.waitReadable(fd, until: deadline) else { return nil }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }
}
