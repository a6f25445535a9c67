#if canImport(Glibc)
    import Glibc
#endif

/// Whole-file reads with a bound, so that a path to `/dev/zero` or a huge log cannot make a reader go on forever.
public enum FileReading {
    /// Reads the file at `path`; throws `EFBIG` (call `read(PATH)`) as soon as it holds more than `limit` bytes.
    ///
    /// Never waits: the file is opened non-blocking, so a FIFO (or a device) reads as what it holds now, an empty
    /// file when no writer has it open, and `EAGAIN` when a writer has it open but has not written. A path an
    /// operator points at a FIFO by mistake must not hold a reload, or the daemon's stop, for ever.
    public static func contents(ofPath path: String, limit: Int) throws(SystemError) -> [UInt8] {
        let fd = try syscall("open(\(path))") { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = try buffer.withUnsafeMutableBytes { raw in
                Result { () throws(SystemError) in try syscall("read(\(path))") { read(fd, raw.baseAddress, raw.count) }
                }
            }.get()
            if count == 0 { return bytes }
            bytes += buffer[0..<count]
            guard bytes.count <= limit else { throw SystemError("read(\(path))", errno: EFBIG) }
        }
    }
}
