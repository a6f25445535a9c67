public import FlagsCore
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A socket client for tests that must send exactly the bytes they choose, garbage included.
public final class RawClient {
    public let fd: Int32
    private let reader: LineReader

    public init(socketPath: String) throws {
        BrokenPipe.ignore()
        fd = try UnixSocket.connect(to: socketPath)
        reader = LineReader(fd: fd)
    }

    deinit {
        close(fd)
    }

    /// Sends bytes as they are.
    public func send(_ bytes: [UInt8]) throws {
        try UnixSocket.writeAll(fd, bytes)
    }

    /// Sends a line of text with its newline.
    public func send(line: String) throws {
        try send(Array((line + "\n").utf8))
    }

    /// The next line the daemon wrote, parsed; nil when the connection closed or `timeout` passed.
    public func readJSON(timeout: Duration = .seconds(10)) -> JSONValue? {
        guard let line = readLine(timeout: timeout) else { return nil }
        return try? JSONValue(parsing: line)
    }

    /// Sends a request and returns the next line; nil when none came.
    public func request(_ line: String, timeout: Duration = .seconds(10)) throws -> JSONValue? {
        try send(line: line)
        return readJSON(timeout: timeout)
    }

    /// The next line, without its newline; nil when the connection closed or `timeout` passed.
    public func readLine(timeout: Duration = .seconds(10)) -> String? {
        reader.readLine(timeout: timeout)
    }

    /// True when the daemon closed the connection within `timeout` (reads until end of stream).
    public func isClosedByPeer(timeout: Duration = .seconds(10)) -> Bool {
        LineReader.isClosedByPeer(fd, timeout: timeout)
    }
}
