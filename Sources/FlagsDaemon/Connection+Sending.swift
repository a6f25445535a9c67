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
            let written = output.withUnsafeBytes { raw in
                let start = raw.baseAddress.map { $0 + outputOffset }
                return send(fd, start, raw.count - outputOffset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                return errno == EAGAIN
            }
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
        var vectors = [iovec](repeating: iovec(), count: 64)
        while !queue.isEmpty {
            let count = min(vectors.count, queue.count)
            for index in 0..<count {
                let chunk = queue[index]
                let skip = index == 0 ? queueOffset : 0
                vectors[index] = iovec(iov_base: chunk.base + skip, iov_len: chunk.count - skip)
            }
            let written = vectors.withUnsafeMutableBufferPointer { buffer -> Int in
                var message = msghdr()
                message.msg_iov = buffer.baseAddress
                message.msg_iovlen = count
                return sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                return errno == EAGAIN
            }
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
