#if canImport(Glibc)
    import Glibc
#endif

/// Writes to stdout and stderr unbuffered, so that `pwflags listen` lines reach a pipe as they happen.
enum Output {
    static func line(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    static func error(_ text: String) {
        write("pwflags: " + text + "\n", to: STDERR_FILENO)
    }

    private static func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { raw in
                Glibc.write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset)
            }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
