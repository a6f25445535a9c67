#if canImport(Glibc)
    import Glibc
#endif

/// Plain reads, writes and waits on any descriptor (a pipe, a terminal, a socket).
public enum Descriptor {
    /// Writes every byte, blocking as needed; a descriptor that takes nothing is an error (`EIO`).
    public static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) throws(SystemError) {
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            let written = try array.withUnsafeBytes { raw in
                Result { () throws(SystemError) in
                    try syscall("write") { write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset) }
                }
            }.get()
            guard written > 0 else { throw SystemError("write", errno: EIO) }
            offset += written
        }
    }

    /// Reads what is available (at most `capacity` bytes); an empty result means end of stream.
    public static func read(_ fd: Int32, capacity: Int = 65536) throws(SystemError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: capacity)
        let count = try buffer.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try syscall("read") { Glibc.read(fd, raw.baseAddress, raw.count) } }
        }.get()
        buffer.removeSubrange(count...)
        return buffer
    }

    /// Reads what a non-blocking descriptor has now into `buffer`: the count (0 at the end of input), or nil when
    /// nothing is there yet (`EAGAIN`).
    public static func readAvailable(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError)
        -> Int?
    {
        do {
            return try syscall("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
        } catch  where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
            return nil
        }
    }

    /// Marks `fd` close-on-exec, so that programs the process starts do not inherit it.
    public static func setCloseOnExec(_ fd: Int32) throws(SystemError) {
        try syscall("fcntl(F_SETFD)") { fcntl(fd, F_SETFD, FD_CLOEXEC) }
    }

    /// Waits up to `milliseconds` for `fd` to become readable (or closed, or failed): true when it is, or when
    /// `poll` itself fails (the read that follows reports why); false when the time ran out or a signal
    /// interrupted the wait, so that the caller, which loops on its deadline, computes the time left.
    public static func waitReadable(_ fd: Int32, milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, milliseconds)
        if ready > 0 { return true }
        return ready < 0 && errno != EINTR
    }

    /// Waits up to `milliseconds` for any of `fds` to become readable (or closed, or failed): the positions in
    /// `fds` of those that did, empty when the time ran out or a signal interrupted the wait (the caller loops on
    /// its deadline, as for `waitReadable`), or nil when `poll` failed.
    public static func waitReadable(_ fds: [Int32], milliseconds: Int32) -> [Int]? {
        var descriptors = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let ready = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
        guard ready >= 0 else { return errno == EINTR ? [] : nil }
        return descriptors.indices.filter { descriptors[$0].revents != 0 }
    }
}
