#if canImport(Glibc)
    public import Glibc
#endif

/// Sends that never raise `SIGPIPE` (`MSG_NOSIGNAL`): a peer that went away is an error to handle, not the end of
/// the process, whether or not the host program ignores the signal.
extension UnixSocket {
    /// Sends what the socket takes now from `bytes`.
    public static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> SendOutcome {
        do {
            return .sent(try syscall("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) })
        } catch {
            return SendOutcome(error)
        }
    }

    /// Sends what the socket takes now from `count` buffers in order, in one `sendmsg`; `buffer(i)` gives the
    /// `i`th. At most `maximumGather` buffers go in one call.
    public static func send(_ fd: Int32, gathering count: Int, _ buffer: (Int) -> UnsafeRawBufferPointer)
        -> SendOutcome
    {
        let count = min(count, maximumGather)
        return withUnsafeTemporaryAllocation(of: iovec.self, capacity: count) { vectors in
            for index in 0..<count {
                let bytes = buffer(index)
                vectors[index] = iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
            }
            var message = msghdr()
            message.msg_iov = vectors.baseAddress
            message.msg_iovlen = count
            let result = Result { () throws(SystemError) in
                try syscall("sendmsg") { sendmsg(fd, &message, Int32(MSG_NOSIGNAL)) }
            }
            switch result {
            case .success(let sent): return .sent(sent)
            case .failure(let error): return SendOutcome(error)
            }
        }
    }

    /// The most buffers one gathering send takes (well under `IOV_MAX`).
    public static let maximumGather = 64

    /// Sends every byte on a blocking socket.
    public static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            offset += try bytes.withUnsafeBytes { raw in
                Result { () throws(SystemError) in
                    try syscall("send") {
                        Glibc.send(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL))
                    }
                }
            }.get()
        }
    }

    /// Sends one datagram to the `sockaddr_un` in `address` (its first `length` bytes) from a fresh socket;
    /// without `blocking`, a full queue at the receiver is `.wouldBlock` instead of a wait.
    public static func sendDatagram(
        _ bytes: [UInt8], to address: [UInt8], length: socklen_t, blocking: Bool
    ) -> SendOutcome {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failed(SystemError("socket", errno: errno)) }
        defer { close(fd) }
        let flags = Int32(MSG_NOSIGNAL) | (blocking ? 0 : Int32(MSG_DONTWAIT))
        do {
            let sent = try address.withUnsafeBytes { raw in
                bytes.withUnsafeBytes { payload in
                    Result { () throws(SystemError) in
                        try syscall("sendto") {
                            sendto(
                                fd, payload.baseAddress, payload.count, flags,
                                raw.baseAddress?.assumingMemoryBound(to: sockaddr.self), length)
                        }
                    }
                }
            }.get()
            return .sent(sent)
        } catch {
            return SendOutcome(error)
        }
    }
}
