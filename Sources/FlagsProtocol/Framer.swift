#if canImport(Glibc)
    import Glibc
#endif

/// Splits a byte stream into its messages, each ended by one delimiter byte: the line protocol's lines (a
/// newline, `\r\n` tolerated, blank lines skipped) or Varlink's messages (a NUL byte). One framer serves both,
/// in the daemon and in the client library.
///
/// A message longer than `maximumBytes` (its end not counted) makes the stream untrusted: `next()` says
/// `tooLong`, whether the message has ended or is still arriving.
public struct Framer: Sendable {
    /// The byte that ends each message.
    public enum Delimiter: Sendable {
        /// `\n`: a `\r` before it is dropped, and lines of blanks only are skipped.
        case newline
        /// NUL, as Varlink frames its JSON objects.
        case nul

        fileprivate var byte: UInt8 { self == .newline ? UInt8(ascii: "\n") : 0 }
    }

    /// What the framer found next.
    public enum Next: Equatable, Sendable {
        /// A complete message, without its delimiter.
        case message(ArraySlice<UInt8>)
        /// More bytes are needed.
        case needMore
        /// The message in progress is longer than the limit; the stream cannot be trusted any more.
        case tooLong
    }

    public let delimiter: Delimiter
    public let maximumBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    /// Where the search for the next delimiter resumes, so that a long message is scanned once, not per read.
    private var scanned = 0

    public init(_ delimiter: Delimiter, maximumBytes: Int) {
        self.delimiter = delimiter
        self.maximumBytes = maximumBytes
    }

    /// Bytes received and not yet returned as messages.
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

    /// Drops the messages already returned once they are a good part of the buffer; a buffer that grew past
    /// 64 KiB for one large message is let go rather than kept for the connection's life.
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
        while true {
            let from = max(scanned, start)
            // memchr: the search runs over every byte a client sends, and this is its fastest form.
            let index = buffer.withUnsafeBufferPointer { raw -> Int in
                guard let base = raw.baseAddress, from < raw.count,
                    let found = memchr(base + from, Int32(delimiter.byte), raw.count - from)
                else { return raw.count }
                return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            }
            guard index < buffer.count else {
                scanned = index
                return bufferedCount > maximumBytes ? .tooLong : .needMore
            }
            let length = index - start
            var end = index
            if delimiter == .newline, end > start, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            let message = buffer[start..<end]
            start = index + 1
            scanned = start
            if length > maximumBytes { return .tooLong }
            guard delimiter == .newline, message.first != UInt8(ascii: "{") else { return .message(message) }
            if message.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { continue }
            return .message(message)
        }
    }
}
