import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

extension Connection {
    /// Writes what the socket takes now; false when the socket failed and the connection must be closed.
    func sendPending() -> Bool {
        if queue.isEmpty { return sendOutput() }
        seal()
        return sendQueue()
    }

    /// The unsent bytes of the first message not yet wholly sent: the reply or notification the client is
    /// reading now, which `MaxPendingBytes` does not count (see `ServerLimits.isOverrun`).
    ///
    /// Every message is one line and holds no other raw newline, so its end is the first newline unsent. Found
    /// once per message: the end is kept until it is sent.
    func unsentOfFirstMessage() -> Int {
        if firstMessageEnd > sentBytes { return firstMessageEnd - sentBytes }
        var scanned = 0
        for (index, chunk) in queue.enumerated() {
            let skip = index == 0 ? queueOffset : 0
            let start = chunk.base + skip
            if let found = memchr(start, 0x0A, chunk.count - skip) {
                return firstMessage(endingAfter: scanned + start.distance(to: found) + 1)
            }
            scanned += chunk.count - skip
        }
        let inOutput = output.withUnsafeBytes { raw -> Int? in
            guard let base = raw.baseAddress, raw.count > outputOffset,
                let found = memchr(base + outputOffset, 0x0A, raw.count - outputOffset)
            else { return nil }
            return (base + outputOffset).distance(to: UnsafeRawPointer(found)) + 1
        }
        guard let inOutput else { return pendingBytes }
        return firstMessage(endingAfter: scanned + inOutput)
    }

    private func firstMessage(endingAfter length: Int) -> Int {
        firstMessageEnd = sentBytes + length
        return length
    }

    /// The fast path: one buffer, one `send`.
    private func sendOutput() -> Bool {
        while outputOffset < output.count {
            let outcome = output.withUnsafeBytes { raw in
                UnixSocket.send(fd, UnsafeRawBufferPointer(rebasing: raw[outputOffset...]))
            }
            guard case .sent(let written) = outcome else { return outcome == .wouldBlock }
            outputOffset += written
            sentBytes += written
        }
        // Keep a small buffer for the next answers; give back what a burst made large.
        output.removeAll(keepingCapacity: output.capacity <= 65536)
        outputOffset = 0
        return true
    }

    /// Queued chunks, many per `sendmsg`.
    private func sendQueue() -> Bool {
        while !queue.isEmpty {
            let outcome = UnixSocket.send(fd, gathering: queue.count) { index in
                let chunk = queue[index]
                let skip = index == 0 ? queueOffset : 0
                return UnsafeRawBufferPointer(start: chunk.base + skip, count: chunk.count - skip)
            }
            guard case .sent(let written) = outcome else { return outcome == .wouldBlock }
            var remaining = written
            queuedBytes -= written
            sentBytes += written
            while remaining > 0, let first = queue.first {
                let left = first.count - queueOffset
                if remaining >= left {
                    remaining -= left
                    queue.removeFirst()
                    queueOffset = 0
                } else {
                    queueOffset += remaining
                    remaining = 0
                }
            }
        }
        return true
    }
}
