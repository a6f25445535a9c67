import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

extension OutputQueue {
    /// Sends what the socket takes now from `count` buffers in one call (`sendmsg`); `buffer(i)` gives the `i`th.
    typealias GatheringSend = (_ fd: Int32, _ count: Int, _ buffer: (Int) -> UnsafeRawBufferPointer) -> SendOutcome

    /// Writes what the socket takes now; false when the socket failed and the connection must be closed.
    /// `gathering` is the send call (a test counts them).
    mutating func send(
        to fd: Int32, gathering: GatheringSend = { UnixSocket.send($0, gathering: $1, $2) }
    ) -> Bool {
        if chunks.isEmpty { return sendBytes(to: fd) }
        seal()
        return sendChunks(to: fd, gathering: gathering)
    }

    /// The fast path: one buffer, one `send`.
    private mutating func sendBytes(to fd: Int32) -> Bool {
        while bytesOffset < bytes.count {
            let outcome = bytes.withUnsafeBytes { raw in
                UnixSocket.send(fd, UnsafeRawBufferPointer(rebasing: raw[bytesOffset...]))
            }
            guard case .sent(let written) = outcome else { return outcome == .wouldBlock }
            bytesOffset += written
            sentBytes += written
        }
        // Keep a small buffer for the next answers; give back what a burst made large.
        bytes.removeAll(keepingCapacity: bytes.capacity <= 65536)
        bytesOffset = 0
        return true
    }

    /// Queued chunks, many per `sendmsg`.
    private mutating func sendChunks(to fd: Int32, gathering: GatheringSend) -> Bool {
        while !chunks.isEmpty {
            let count = min(chunks.count, UnixSocket.maximumGather)
            let outcome = withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: count) { buffers in
                lend(from: 0, count: count, into: buffers) { gathering(fd, count) { buffers[$0] } }
            }
            guard case .sent(let written) = outcome else { return outcome == .wouldBlock }
            var remaining = written
            queuedBytes -= written
            sentBytes += written
            while remaining > 0, let first = chunks.first {
                let left = first.count - chunkOffset
                if remaining >= left {
                    remaining -= left
                    chunks.removeFirst()
                    chunkOffset = 0
                } else {
                    chunkOffset += remaining
                    remaining = 0
                }
            }
        }
        return true
    }

    /// Fills `buffers` with the unsent bytes of the first `count` chunks and calls `send` while all of them
    /// are lent: an array's bytes are valid only inside its `withUnsafeBytes`, so each one nests the next.
    private func lend(
        from index: Int, count: Int, into buffers: UnsafeMutableBufferPointer<UnsafeRawBufferPointer>,
        _ send: () -> SendOutcome
    ) -> SendOutcome {
        guard index < count else { return send() }
        let skip = index == 0 ? chunkOffset : 0
        return chunks[index].withBytes { raw in
            buffers[index] = UnsafeRawBufferPointer(rebasing: raw[skip...])
            return lend(from: index + 1, count: count, into: buffers, send)
        }
    }
}
