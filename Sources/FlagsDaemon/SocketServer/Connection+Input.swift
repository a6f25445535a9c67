import UnixIO

extension Connection {
    /// What one read from the peer brought.
    enum Input {
        /// Bytes went to the framer.
        case bytes
        /// Nothing to read now (the socket would block).
        case nothing
        /// The peer sent its last byte.
        case end
        /// The socket failed: the connection must be closed.
        case failed
    }

    /// Reads what the socket holds into the framer, through `buffer` (the loop's one read buffer).
    func receive(through buffer: inout [UInt8]) -> Input {
        let count: Int
        do {
            let result = buffer.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in try Descriptor.readAvailable(fd, into: buffer) }
            }
            guard let read = try result.get() else { return .nothing }
            count = read
        } catch {
            return .failed
        }
        if count == 0 { return .end }
        buffer.withUnsafeBytes { raw in
            framer.append(UnsafeRawBufferPointer(rebasing: raw[0..<count]))
        }
        return .bytes
    }

    /// The epoll events this connection waits for now.
    func wantedEvents(draining: Bool) -> Epoll.Events {
        // After the end of input, EPOLLRDHUP would be reported again and again: only a full hangup matters then.
        var events: Epoll.Events = inputClosed ? .hangup : .readHangup
        if !busy, !heldBack, !closeAfterFlush, !inputClosed, !draining {
            events.insert(.input)
        }
        if pendingBytes > 0 { events.insert(.output) }
        return events
    }
}
