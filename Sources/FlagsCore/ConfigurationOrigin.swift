/// Where a configuration value came from: a file and line, or the command line.
public struct ConfigurationOrigin: Sendable, Hashable, CustomStringConvertible {
    /// The file's path as it was given, or `command line`.
    public var file: String
    /// 1-based; 0 for a source without lines.
    public var line: Int

    public init(file: String, line: Int) {
        self.file = file
        self.line = line
    }

    /// The origin of values given as command-line options.
    public static let commandLine = ConfigurationOrigin(file: "command line", line: 0)

    public var description: String { line > 0 ? "\(file):\(line)" : file }
}
