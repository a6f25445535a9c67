#if canImport(Glibc)
    import Glibc
#endif

/// Whole-file reads with a bound, so that a path to `/dev/zero` or a huge log cannot make a reader go on forever.
public enum FileReading {
    /// How long a FIFO's reader waits for its writer to write and close, at the most.
    public static let fifoWait: Duration = .seconds(2)

    /// Reads the file at `path`; throws `EFBIG` (call `read(PATH)`) as soon as it holds more than `limit` bytes.
    ///
    /// Never waits for long. A FIFO is read until its writer closes it, for `fifoWait` at the most: a path an
    /// operator points at a FIFO nobody writes to then fails with `ETIMEDOUT` instead of holding a reload, or the
    /// daemon's stop, for ever.
    public static func contents(ofPath path: String, limit: Int, fifoWait: Duration = fifoWait)
        throws(SystemError) -> [UInt8]
    {
        // Non-blocking, or the open of a FIFO would itself wait for a writer.
        let fd = try syscall("open(\(path))") { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFIFO {
            return try readFIFO(fd, path: path, limit: limit, deadline: ContinuousClock.now + fifoWait)
        }
        var bytes: [UInt8] = []
        while let chunk = try readChunk(fd, path: path) {
            if chunk.isEmpty { return bytes }
            try append(chunk, to: &bytes, path: path, limit: limit)
        }
        // A regular file or a device does not say EAGAIN; one that does is read as far as it went.
        return bytes
    }

    /// Reads the regular file at `path`, at most `limit` bytes: anything else (a FIFO, a device such as
    /// `/dev/zero`, a directory) throws `EINVAL` (call `read(PATH): not a regular file`) without a byte read; a file
    /// larger than `limit` throws `EFBIG` before it is read.
    ///
    /// With `trustedOwner`, a file that another user could have planted or changed (`TrustedOwner`) throws `EPERM`
    /// with the reason, before a byte is read.
    public static func regularFile(ofPath path: String, limit: Int, trustedOwner: Bool = false)
        throws(SystemError) -> [UInt8]
    {
        let fd = try syscall("open(\(path))") { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        defer { close(fd) }
        var info = stat()
        try syscall("fstat(\(path))") { fstat(fd, &info) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw SystemError("read(\(path)): not a regular file", errno: EINVAL)
        }
        if trustedOwner, let problem = TrustedOwner.problem(info) {
            throw SystemError("read(\(path)): \(problem)", errno: EPERM)
        }
        guard Int(info.st_size) <= limit else { throw SystemError("read(\(path))", errno: EFBIG) }
        var bytes: [UInt8] = []
        while let chunk = try readChunk(fd, path: path) {
            if chunk.isEmpty { return bytes }
            try append(chunk, to: &bytes, path: path, limit: limit)
        }
        return bytes
    }

    /// A FIFO opened non-blocking reads as ended (0) before any writer came, so it is waited on first: what the
    /// writer writes, until it closes (the end), or until `deadline`.
    private static func readFIFO(_ fd: Int32, path: String, limit: Int, deadline: ContinuousClock.Instant)
        throws(SystemError) -> [UInt8]
    {
        var bytes: [UInt8] = []
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw SystemError("read(\(path))", errno: ETIMEDOUT) }
            let milliseconds =
                remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000
            guard Descriptor.waitReadable(fd, milliseconds: Int32(clamping: milliseconds + 1)) else { continue }
            // nil: nothing after all (EAGAIN); wait again.
            guard let chunk = try readChunk(fd, path: path) else { continue }
            if chunk.isEmpty { return bytes }
            try append(chunk, to: &bytes, path: path, limit: limit)
        }
    }

    /// The next bytes: empty at the end, nil when a non-blocking descriptor has none now (`EAGAIN`).
    private static func readChunk(_ fd: Int32, path: String) throws(SystemError) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 16384)
        let count: Int
        do {
            count = try buffer.withUnsafeMutableBytes { raw in
                Result { () throws(SystemError) in try syscall("read(\(path))") { read(fd, raw.baseAddress, raw.count) }
                }
            }.get()
        } catch  where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
            return nil
        }
        return Array(buffer[0..<count])
    }

    private static func append(_ chunk: [UInt8], to bytes: inout [UInt8], path: String, limit: Int)
        throws(SystemError)
    {
        bytes += chunk
        guard bytes.count <= limit else { throw SystemError("read(\(path))", errno: EFBIG) }
    }
}
