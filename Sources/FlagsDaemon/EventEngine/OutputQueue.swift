import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A connection's unsent output, in order: bytes being built, then sealed chunks that go out many per
/// `sendmsg`.
///
/// A protocol writes small answers straight into `bytes` (the fast path: one buffer, one `send`) and queues
/// large or shared ones by reference: a `ByteChunk` shared by every connection that sends it, or an array
/// shared with a cache, so a bulk answer is never copied per connection.
struct OutputQueue {
    /// A queued piece of output.
    enum Chunk {
        case shared(ByteChunk)
        case bytes([UInt8])

        var count: Int {
            switch self {
            case .shared(let chunk): chunk.count
            case .bytes(let array): array.count
            }
        }
    }

    /// Output being built, and on the fast path (nothing queued) unsent output; `bytesOffset` bytes of it are
    /// already written.
    var bytes: [UInt8] = []
    var bytesOffset = 0
    /// Sealed output waiting for the socket, in order.
    var chunks: [Chunk] = []
    /// Bytes of `chunks[0]` already written.
    var chunkOffset = 0
    /// Bytes in `chunks`, minus `chunkOffset`.
    var queuedBytes = 0
    /// Bytes written to the socket since the connection opened.
    var sentBytes = 0
    /// Where the first line not yet wholly sent ends, counted as `sentBytes` counts; known once it was looked
    /// for (`unsentOfFirstLine`).
    var firstLineEnd = 0

    /// The bytes not yet written.
    var pendingBytes: Int { queuedBytes + bytes.count - bytesOffset }

    /// Moves the output built so far behind what is queued.
    mutating func seal() {
        guard bytes.count > bytesOffset else {
            bytes.removeAll(keepingCapacity: true)
            bytesOffset = 0
            return
        }
        let chunk = ByteChunk(bytes[bytesOffset...])
        chunks.append(.shared(chunk))
        queuedBytes += chunk.count
        bytes.removeAll(keepingCapacity: bytes.capacity <= 65536)
        bytesOffset = 0
    }

    /// Queues shared bytes after everything written so far.
    mutating func append(shared chunk: ByteChunk) {
        seal()
        chunks.append(.shared(chunk))
        queuedBytes += chunk.count
    }

    /// Queues `chunk` after everything written so far: copied when small (one buffer, one send), by reference
    /// when not.
    mutating func append(sharing chunk: ByteChunk) {
        if chunk.count < 512 {
            bytes.append(contentsOf: UnsafeRawBufferPointer(start: chunk.base, count: chunk.count))
        } else {
            append(shared: chunk)
        }
    }

    /// Queues an array after everything written so far, by reference (its storage is shared, not copied).
    mutating func append(_ array: [UInt8]) {
        guard !array.isEmpty else { return }
        seal()
        chunks.append(.bytes(array))
        queuedBytes += array.count
    }

    /// The unsent bytes of the first line not yet wholly sent: for a protocol whose every message is one line
    /// (no other raw newline), the message the client is reading now. Found once per line: its end is kept
    /// until it is sent.
    mutating func unsentOfFirstLine() -> Int {
        unsentOfFirstMessage(endingWith: 0x0A)
    }

    /// As `unsentOfFirstLine`, for a protocol whose messages end with `terminator` (Varlink's NUL).
    mutating func unsentOfFirstMessage(endingWith terminator: UInt8) -> Int {
        if firstLineEnd > sentBytes { return firstLineEnd - sentBytes }
        var scanned = 0
        for (index, chunk) in chunks.enumerated() {
            let skip = index == 0 ? chunkOffset : 0
            let found = chunk.withBytes { raw in
                Self.messageEnd(in: UnsafeRawBufferPointer(rebasing: raw[skip...]), terminator: terminator)
            }
            if let found { return firstLine(endingAfter: scanned + found) }
            scanned += chunk.count - skip
        }
        let inBytes = bytes.withUnsafeBytes { raw in
            Self.messageEnd(in: UnsafeRawBufferPointer(rebasing: raw[bytesOffset...]), terminator: terminator)
        }
        guard let inBytes else { return pendingBytes }
        return firstLine(endingAfter: scanned + inBytes)
    }

    private mutating func firstLine(endingAfter length: Int) -> Int {
        firstLineEnd = sentBytes + length
        return length
    }

    /// The length up to and including the first `terminator` in `raw`.
    private static func messageEnd(in raw: UnsafeRawBufferPointer, terminator: UInt8) -> Int? {
        guard let base = raw.baseAddress, raw.count > 0, let found = memchr(base, Int32(terminator), raw.count) else {
            return nil
        }
        return base.distance(to: UnsafeRawPointer(found)) + 1
    }
}

extension OutputQueue.Chunk {
    /// Lends the chunk's bytes.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        switch self {
        case .shared(let chunk): body(UnsafeRawBufferPointer(start: chunk.base, count: chunk.count))
        case .bytes(let array): array.withUnsafeBytes(body)
        }
    }
}
