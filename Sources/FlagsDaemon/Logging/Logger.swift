public import FlagsCore
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's log: a level, a message, and fields named the way the journal names them (`FLAG_KEY`).
///
/// Under systemd, entries go to the journal with their fields (`journalctl -o verbose` shows `FLAG_KEY=`…);
/// elsewhere, plain lines go to stderr. Nothing secret is ever passed in: the API token is read by the
/// upstream client alone and no log call takes it.
public final class Logger: Sendable {
    private let threshold: Locked<LogLevel>
    private let sink: @Sendable (LogLevel, String, [(String, String)]) -> Void

    /// A logger writing to the journal with fields when stderr is the journal, else plain lines to stderr.
    public convenience init(level: LogLevel, environment: [String: String] = [:]) {
        if Systemd.stderrIsJournal(environment: environment) {
            self.init(level: level) { level, message, fields in
                Systemd.journalSend(priority: level.syslogPriority, message: message, fields: fields)
            }
        } else {
            self.init(level: level, sink: Logger.writeToStandardError)
        }
    }

    /// A logger with its own sink, for tests.
    init(level: LogLevel, sink: @escaping @Sendable (LogLevel, String, [(String, String)]) -> Void) {
        self.threshold = Locked(level)
        self.sink = sink
    }

    /// The least important level written.
    var level: LogLevel {
        get { threshold.withLock { $0 } }
        set { threshold.withLock { $0 = newValue } }
    }

    func log(_ level: LogLevel, _ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard level >= self.level else { return }
        sink(level, message, fields.map { ($0.key, $0.value) })
    }

    func debug(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(.debug, message, fields)
    }

    func info(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(.info, message, fields)
    }

    func notice(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(.notice, message, fields)
    }

    public func warning(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(.warning, message, fields)
    }

    public func error(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        log(.err, message, fields)
    }

    /// `<level>: message FIELD=value …`, one line; control characters in the message and the values (a newline,
    /// a NUL, an escape sequence in a flag key) are written as escapes by `ControlEscaping`'s rule, the CLI's on a
    /// terminal too, so a line stays a line and a terminal showing the log is sent no control sequence.
    @Sendable static func writeToStandardError(level: LogLevel, message: String, fields: [(String, String)]) {
        var line = "\(level.rawValue): \(ControlEscaping.escaped(message))"
        for (name, value) in fields {
            let needsQuotes = value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" })
            let escaped = ControlEscaping.escaped(value)
            line += " \(name)=" + (needsQuotes ? "\"\(escaped.replacingQuotes())\"" : escaped)
        }
        line += "\n"
        // One write(2) per line (a pipe or the journal takes a line whole), so that lines from several threads
        // never interleave; a log that cannot be written is not worth failing for.
        try? Descriptor.writeAll(STDERR_FILENO, Array(line.utf8))
    }
}

extension String {
    fileprivate func replacingQuotes() -> String {
        String(flatMap { $0 == "\"" ? ["\\", "\""] : [$0] })
    }
}
