/// One thing wrong with the configuration, with the place that caused it.
///
/// `line` is 1-based; 0 means the problem concerns a whole source (a file that cannot be read, a command-line
/// option) and the description leaves the line out.
public struct ConfigurationProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file's path as it was given, or `command line` for an option.
    public var file: String
    public var line: Int
    public var message: String

    public init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// Creates a problem located at an origin.
    public init(at origin: ConfigurationOrigin, _ message: String) {
        self.init(file: origin.file, line: origin.line, message: message)
    }

    /// `<file>:<line>: <message>`, the form compilers use and editors jump to; `<file>: <message>` for line 0.
    public var description: String { line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)" }
}
