#if canImport(Glibc)
    import Glibc
#endif

/// Splits a Varlink byte stream into its messages: each a JSON object ended by one NUL byte, of at most
/// `maximumMessageBytes` (the NUL not counted).
public struct VarlinkFramer: Sendable {
    public let maximumMessageBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    /// Where the search for the next NUL resumes, so that a long message is scanned once, not per read.
    private var scanned = 0

    public init(maximumMessageBytes: Int) {
        self.maximumMessageBytes = maximumMessageBytes
    }

    /// What the framer found next.
    public enum Next: Equatable, Sendable {
        /// A complete message, without its NUL.
        case message(ArraySlice<UInt8>)
        /// More bytes are needed.
        case needMore
        /// The message in progress is longer than the limit; the stream cannot be trusted any more.
        case tooLong
    }

    /// Bytes received and not yet returned as messages.
    public var bufferedCount: Int { buffer.count - start }

    /// Adds bytes read from the stream.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Adds bytes read from the stream (the form the daemon's loop calls on every read: a memcpy).
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Drops the messages already returned once they are a good part of the buffer.
    private mutating func compact() {
        if start > 0, start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 65536)
            start = 0
            scanned = 0
        } else if start > 65536, start * 2 > buffer.count {
            buffer.removeSubrange(0..<start)
            scanned -= start
            start = 0
        }
    }

    /// Returns the next message, or why there is none.
    public mutating func next() -> Next {
        let from = max(scanned, start)
        let index = buffer.withUnsafeBufferPointer { raw -> Int in
            guard let base = raw.baseAddress, from < raw.count, let found = memchr(base + from, 0, raw.count - from)
            else { return raw.count }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
        guard index < buffer.count else {
            scanned = index
            return bufferedCount > maximumMessageBytes ? .tooLong : .needMore
        }
        let message = buffer[start..<index]
        start = index + 1
        scanned = start
        return message.count > maximumMessageBytes ? .tooLong : .message(message)
    }
}
