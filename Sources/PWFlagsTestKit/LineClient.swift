import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The benchmark's client: raw bytes out, whole lines in, nothing parsed, so that the daemon and the echo floor
/// are measured with exactly the same client code.
public final class LineClient {
    public let fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)
    private var start = 0
    private var end = 0

    /// `receiveTimeout`: a read that waits longer ends with nil, so that a test fails on a daemon that stopped
    /// answering instead of hanging; nil (the benchmark) waits as long as it takes.
    public init(path: String, receiveTimeout: Duration? = nil) throws {
        BrokenPipe.ignore()
        fd = try UnixSocket.connect(to: path)
        if let receiveTimeout {
            let (seconds, attoseconds) = receiveTimeout.components
            var limit = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    deinit {
        close(fd)
    }

    public func send(_ bytes: [UInt8]) throws {
        try UnixSocket.writeAll(fd, bytes)
    }

    /// Reads one line and returns its length (without the newline); nil at end of stream.
    @discardableResult
    public func readLine() -> Int? {
        while true {
            if let newline = indexOfNewline() {
                let length = newline - start
                start = newline + 1
                return length
            }
            if start > 0 {
                buffer.withUnsafeMutableBytes { raw in
                    guard let base = raw.baseAddress else { return }
                    memmove(base, base + start, end - start)
                }
                end -= start
                start = 0
            }
            if end == buffer.count { buffer.append(contentsOf: [UInt8](repeating: 0, count: buffer.count)) }
            guard let count = readMore(), count > 0 else { return nil }
            end += count
        }
    }

    /// Reads one line and returns it as text (for the few answers the benchmark looks into).
    public func readText() -> String? {
        while indexOfNewline() == nil {
            guard fill() else { return nil }
        }
        guard let newline = indexOfNewline() else { return nil }
        let text = String(decoding: buffer[start..<newline], as: UTF8.self)
        start = newline + 1
        return text
    }

    /// True when a line is already buffered.
    public var hasBufferedLine: Bool { indexOfNewline() != nil }

    /// Reads what is available into the buffer; false at end of stream.
    public func fill() -> Bool {
        if end == buffer.count {
            if start > 0 {
                buffer.replaceSubrange(0..<(end - start), with: buffer[start..<end])
                end -= start
                start = 0
            } else {
                buffer.append(contentsOf: [UInt8](repeating: 0, count: buffer.count))
            }
        }
        guard let count = readMore(), count > 0 else { return false }
        end += count
        return true
    }

    /// Reads into the free end of the buffer: the count (0 at the end of the stream), or nil on an error.
    private func readMore() -> Int? {
        buffer.withUnsafeMutableBytes { raw in
            try? syscall("read") { read(fd, raw.baseAddress.map { $0 + end }, raw.count - end) }
        }
    }

    private func indexOfNewline() -> Int? {
        buffer.withUnsafeBytes { raw -> Int? in
            guard let base = raw.baseAddress, end > start else { return nil }
            guard let found = memchr(base + start, 0x0A, end - start) else { return nil }
            return base.distance(to: UnsafeRawPointer(found))
        }
    }
}
