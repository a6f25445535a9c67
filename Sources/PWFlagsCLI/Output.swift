import UnixIO

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
        // A closed stdout (`pwflags listen | head`) ends the output, not the program: nothing to report to.
        try? Descriptor.writeAll(fd, text.utf8)
    }
}
