import FlagsCore
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Writes to stdout and stderr unbuffered, so that `pwflags listen` lines reach a pipe as they happen.
///
/// Keys, rule ids and property names come from a flag source that anyone with the socket, the local file or the
/// Pushwoosh project can write: on a terminal, every control character in a line is shown escaped by
/// `ControlEscaping`'s rule (`\x1B`, `\n`, `\u009B`), so no flag can retitle the window, clear the screen or
/// forge a line. A pipe gets the exact text, and so does `--json` (`exact`), which JSON already escapes.
enum Output {
    /// Whether stdout is a terminal, asked once.
    static let isTerminal = isatty(STDOUT_FILENO) == 1

    static func line(_ text: String, exact: Bool = false) {
        write((exact || !isTerminal ? text : escaped(text)) + "\n", to: STDOUT_FILENO)
    }

    /// The text as a terminal shows it: control characters as escapes (`ControlEscaping`, the log's rule too).
    static func escaped(_ text: String) -> String { ControlEscaping.escaped(text) }

    static func error(_ text: String) {
        write("pwflags: " + (isErrorTerminal ? escaped(text) : text) + "\n", to: STDERR_FILENO)
    }

    /// Whether stderr is a terminal: error lines name keys too.
    static let isErrorTerminal = isatty(STDERR_FILENO) == 1

    private static func write(_ text: String, to fd: Int32) {
        // A closed stdout (`pwflags listen | head`) ends the output, not the program: nothing to report to.
        try? Descriptor.writeAll(fd, text.utf8)
    }
}
