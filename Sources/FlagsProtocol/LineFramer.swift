#if canImport(Glibc)
    import Glibc
#endif

/// Splits a byte stream into lines of at most `maximumLineBytes`, tolerating `\r\n` and skipping blank lines.
public struct LineFramer: Sendable {
    public let maximumLineBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    /// Where the search for the next newline resumes, so that a long line is scanned once, not per read.
    private var scanned = 0

    public init(maximumLineBytes: Int) {
        self.maximumLineBytes = maximumLineBytes
    }

    /// What the framer found next.
    public enum Next: Equatable, Sendable {
        /// A complete line, without its line ending.
        case line(ArraySlice<UInt8>)
        /// More bytes are needed.
        case needMore
        /// The line in progress is longer than the limit; the stream cannot be trusted any more.
        case tooLong
    }

    /// Bytes received and not yet returned as lines.
    public var bufferedCount: Int { buffer.count - start }

    /// Adds bytes read from the stream.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Adds bytes read from the stream; the concrete form the daemon's loop calls on every read, so that the
    /// copy is a memcpy and not a generic walk over a collection from another module.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Drops the lines already returned once they are a good part of the buffer.
    private mutating func compact() {
        if start > 0, start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
            scanned = 0
        } else if start > 65536, start * 2 > buffer.count {
            buffer.removeSubrange(0..<start)
            scanned -= start
            start = 0
        }
    }

    /// Returns the next line, or why there is none.
    public mutating func next() -> Next {
        while true {
            let from = max(scanned, start)
            // memchr: the search runs over every byte a client sends, and this is its fastest form.
            let index = buffer.withUnsafeBufferPointer { raw -> Int in
                guard let base = raw.baseAddress, from < raw.count,
                    let found = memchr(base + from, Int32(UInt8(ascii: "\n")), raw.count - from)
                else { return raw.count }
                return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            }
            guard index < buffer.count else {
                scanned = index
                return bufferedCount > maximumLineBytes ? .tooLong : .needMore
            }
            var end = index
            if end > start, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            let line = buffer[start..<end]
            let length = index - start
            start = index + 1
            scanned = start
            if length > maximumLineBytes { return .tooLong }
            if line.first == UInt8(ascii: "{") { return .line(line) }
            if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { continue }
            return .line(line)
        }
    }
}
