public import FlagsCore
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A Varlink client for tests and the bench: sends calls (or any bytes) and reads replies, each ended by NUL.
public final class VarlinkClient {
    /// The daemon's flags interface, which a method name without a dot belongs to.
    public static let interface = "io.github.pwflagsd.Flags"

    public let fd: Int32
    private let reader: LineReader

    public init(socketPath: String) throws {
        BrokenPipe.ignore()
        fd = try UnixSocket.connect(to: socketPath)
        reader = LineReader(fd: fd, terminator: 0)
    }

    deinit {
        close(fd)
    }

    /// The bytes of a call: `method` qualified with `interface` unless it has a dot of its own.
    public static func message(
        _ method: String, _ parameters: JSONValue = [:], more: Bool = false, oneway: Bool = false
    ) -> [UInt8] {
        var members: [String: JSONValue] = [
            "method": .string(method.contains(".") ? method : interface + "." + method), "parameters": parameters,
        ]
        if more { members["more"] = true }
        if oneway { members["oneway"] = true }
        var bytes: [UInt8] = []
        JSONValue.object(members).write(to: &bytes)
        bytes.append(0)
        return bytes
    }

    /// Sends bytes as they are.
    public func send(_ bytes: [UInt8]) throws {
        try UnixSocket.writeAll(fd, bytes)
    }

    /// Sends one call without waiting for its reply.
    public func send(_ method: String, _ parameters: JSONValue = [:], more: Bool = false, oneway: Bool = false)
        throws
    {
        try send(Self.message(method, parameters, more: more, oneway: oneway))
    }

    /// The next reply, parsed; nil when the connection closed or `timeout` passed.
    public func reply(timeout: Duration = .seconds(10)) -> JSONValue? {
        guard let text = replyText(timeout: timeout) else { return nil }
        return try? JSONValue(parsing: text)
    }

    /// The next reply's text, without its NUL (the bench reads it as the line client reads a line).
    public func replyText(timeout: Duration = .seconds(10)) -> String? {
        reader.readLine(timeout: timeout)
    }

    /// Sends a call and returns its reply (`{"parameters":…}` or `{"error":…,"parameters":…}`).
    public func call(_ method: String, _ parameters: JSONValue = [:], timeout: Duration = .seconds(10)) throws
        -> JSONValue?
    {
        try send(method, parameters)
        return reply(timeout: timeout)
    }

    /// True when the daemon closed the connection within `timeout` (reads until end of stream).
    public func isClosedByPeer(timeout: Duration = .seconds(10)) -> Bool {
        LineReader.isClosedByPeer(fd, timeout: timeout)
    }
}
