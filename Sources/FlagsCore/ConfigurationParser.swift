/// Reads configuration files in the systemd style (docs/configuration.md) into a `Configuration`, collecting
/// every problem.
///
/// Feed the sources in their documented order (the main file, its drop-ins in lexical order, then command-line
/// options through `assign(_:value:at:name:)`), then call `finish()`, which adds the checks that span keys.
///
/// The format follows `systemd.syntax(7)`:
/// - `[Section]` headers; only `[Pushwoosh]`, `[FeatureFlags]` and `[Daemon]` exist.
/// - `Key=Value` assignments; blanks around the key and the value are dropped; keys are case-sensitive.
/// - Lines whose first non-blank character is `#` or `;` are comments; blank lines are ignored.
/// - A later assignment of a key wins, across files too.
/// - An empty value (`Key=`) puts the key back to its default, as systemd does, so a drop-in can undo the main file.
/// - A line ending in an unescaped backslash continues on the next line; the backslash becomes a space, and
///   comment lines inside the continuation are skipped, as in systemd. Problems name the line where it started.
///
/// Unknown sections, unknown keys, keys before any section, malformed lines and bad values are problems; the
/// parser goes on after each so that one run reports them all. A bad value leaves the key as it was. Keys inside
/// an unknown section are skipped without further problems, since the section was already reported.
public struct ConfigurationParser: Sendable {
    /// The configuration so far: the starting one with every valid assignment applied.
    public private(set) var configuration: Configuration
    /// Every problem so far, in the order met; `finish()` adds the cross-key ones.
    public private(set) var problems: [ConfigurationProblem] = []
    /// Where each key was last assigned (including resets with `Key=`); keys left at their start value are absent.
    public private(set) var origins: [ConfigurationKey: ConfigurationOrigin] = [:]

    /// The order of each key's last assignment, to tell which of two keys was set later.
    private var assignmentOrder: [ConfigurationKey: Int] = [:]
    private var assignmentCount = 0
    /// The files in the order they were parsed, so that `finish()` reports every problem in reading order.
    private var files: [String] = []

    /// Starts from a configuration, normally the defaults.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The smallest `MaxLineBytes`: a line must hold any reasonable request (docs/protocol.md).
    public static let minimumMaxLineBytes = 1024
    /// The longest socket path: `sun_path` holds 108 bytes, including the terminating NUL.
    public static let maximumSocketPathBytes = 107

    /// Parses one file's text; `file` is its path, used in problems and to resolve relative paths in it.
    public mutating func parse(text: String, file: String) {
        if !files.contains(file) { files.append(file) }
        var section = SectionState.none
        var pending: (text: String, line: Int)?
        for (offset, rawLine) in Self.lines(of: text).enumerated() {
            let lineNumber = offset + 1
            var line = rawLine
            if lineNumber == 1, line.unicodeScalars.first == "\u{FEFF}" {
                line.unicodeScalars.removeFirst()
            }
            let firstNonBlank = Self.trimmed(line).unicodeScalars.first
            if firstNonBlank == "#" || firstNonBlank == ";" { continue }

            let logical = (pending?.text ?? "") + line
            let startLine = pending?.line ?? lineNumber
            if Self.endsInContinuation(logical) {
                pending = (String(logical.unicodeScalars.dropLast()) + " ", startLine)
                continue
            }
            pending = nil
            parseLine(logical, at: ConfigurationOrigin(file: file, line: startLine), section: &section)
        }
        if let pending {
            // A backslash on the last line continues into nothing; systemd takes the line as it stands.
            parseLine(pending.text, at: ConfigurationOrigin(file: file, line: pending.line), section: &section)
        }
    }

    /// Validates one value and assigns it, or records a problem at `origin`.
    ///
    /// `name` is how problems call the setting; it defaults to the key's name and lets command-line options speak
    /// of themselves (`--socket`). An empty value resets the key to its default.
    public mutating func assign(
        _ key: ConfigurationKey, value: String, at origin: ConfigurationOrigin, name: String? = nil
    ) {
        let name = name ?? key.name
        if value.isEmpty {
            reset(key)
            record(key, at: origin)
            return
        }
        if let message = Self.apply(key, value: value, name: name, origin: origin, to: &configuration) {
            problems.append(ConfigurationProblem(at: origin, message))
        } else {
            record(key, at: origin)
        }
    }

    /// The configuration, or every problem including those that span keys, in reading order (file by file as
    /// parsed, line by line; the command line last). Call it after the last source.
    public func finish() -> Result<Configuration, ConfigurationErrors> {
        let all = problems + crossKeyProblems()
        guard !all.isEmpty else { return .success(configuration) }
        let position = { (problem: ConfigurationProblem) in
            (files.firstIndex(of: problem.file) ?? files.count, problem.line)
        }
        // Stable: problems at the same place keep the order they were found in.
        let ordered = all.enumerated().sorted { left, right in
            let (a, b) = (position(left.element), position(right.element))
            return a != b ? a < b : left.offset < right.offset
        }
        return .failure(ConfigurationErrors(ordered.map(\.element)))
    }

    /// The problems between keys: `MaxPendingBytes` below `MaxLineBytes`, reported where the later one was set.
    public func crossKeyProblems() -> [ConfigurationProblem] {
        pendingBytesProblems() + ofrepTokenProblems()
    }

    /// A TCP `ListenAddress` without a `TokenFile`: every local user can reach a loopback port, so TCP clients
    /// must present a token; reported where `ListenAddress` was set.
    private func ofrepTokenProblems() -> [ConfigurationProblem] {
        guard configuration.ofrepListenAddress?.isTCP == true, configuration.ofrepTokenFile == nil else { return [] }
        let origin = origins[.listenAddress] ?? ConfigurationOrigin(file: "defaults", line: 0)
        return [ConfigurationProblem(at: origin, "ListenAddress is a TCP address: set TokenFile too")]
    }

    private func pendingBytesProblems() -> [ConfigurationProblem] {
        guard configuration.maxPendingBytes < configuration.maxLineBytes else { return [] }
        let pendingOrder = assignmentOrder[.maxPendingBytes] ?? 0
        let lineOrder = assignmentOrder[.maxLineBytes] ?? 0
        let blamed: ConfigurationKey = pendingOrder > lineOrder ? .maxPendingBytes : .maxLineBytes
        // Unreachable from the defaults, which satisfy the rule; a caller's own start value has no place to blame.
        let origin = origins[blamed] ?? ConfigurationOrigin(file: "defaults", line: 0)
        let message =
            "MaxPendingBytes (\(configuration.maxPendingBytes)) must be at least "
            + "MaxLineBytes (\(configuration.maxLineBytes))"
        return [ConfigurationProblem(at: origin, message)]
    }

    /// Parses one file's text into `configuration` and returns its problems, cross-key ones included.
    ///
    /// Valid assignments are applied even when there are problems; callers that must not act on a bad file
    /// should keep their previous configuration when the result is not empty.
    public static func parse(
        text: String,
        file: String,
        into configuration: inout Configuration
    ) -> [ConfigurationProblem] {
        var parser = ConfigurationParser(configuration: configuration)
        parser.parse(text: text, file: file)
        configuration = parser.configuration
        return parser.problems + parser.crossKeyProblems()
    }

    // MARK: Lines

    /// Which section the lines being read belong to.
    private enum SectionState {
        case none
        case known(ConfigurationSection)
        /// An unknown or malformed header, already reported; its keys are skipped.
        case unknown
    }

    private mutating func parseLine(_ line: String, at origin: ConfigurationOrigin, section: inout SectionState) {
        let text = Self.trimmed(line)
        guard !text.isEmpty else { return }

        if text.hasPrefix("[") {
            guard text.count >= 2, text.hasSuffix("]") else {
                problems.append(ConfigurationProblem(at: origin, "invalid section header '\(Self.quoted(text))'"))
                section = .unknown
                return
            }
            let name = String(text.dropFirst().dropLast())
            if let known = ConfigurationSection(rawValue: name) {
                section = .known(known)
            } else {
                problems.append(ConfigurationProblem(at: origin, "unknown section [\(Self.quoted(name))]"))
                section = .unknown
            }
            return
        }

        guard let equals = text.firstIndex(of: "=") else {
            let message = "invalid line '\(Self.quoted(text))' (expected Key=Value, a [Section] header or a comment)"
            problems.append(ConfigurationProblem(at: origin, message))
            return
        }
        let keyName = Self.trimmed(text[..<equals])
        let value = Self.trimmed(text[text.index(after: equals)...])
        guard !keyName.isEmpty else {
            problems.append(ConfigurationProblem(at: origin, "missing key name before '=' in '\(Self.quoted(text))'"))
            return
        }

        switch section {
        case .none:
            let message =
                "key '\(Self.quoted(keyName))' outside of any section "
                + "(expected [Pushwoosh], [FeatureFlags] or [Daemon] before it)"
            problems.append(ConfigurationProblem(at: origin, message))
        case .unknown:
            return
        case .known(let current):
            guard let key = ConfigurationKey(name: keyName, in: current) else {
                problems.append(ConfigurationProblem(at: origin, Self.unknownKeyMessage(keyName, in: current)))
                return
            }
            assign(key, value: value, at: origin)
        }
    }

    /// `unknown key 'Foo' in section [Daemon]`, with a hint when the key exists elsewhere or in another case.
    private static func unknownKeyMessage(_ name: String, in section: ConfigurationSection) -> String {
        let message = "unknown key '\(quoted(name))' in section [\(section.rawValue)]"
        if let elsewhere = ConfigurationKey.allCases.first(where: { $0.name == name }) {
            return message + " (it belongs in [\(elsewhere.section.rawValue)])"
        }
        if let similar = ConfigurationKey.allCases.first(where: { $0.name.lowercased() == name.lowercased() }) {
            return message + " (keys are case-sensitive: did you mean '\(similar.name)'?)"
        }
        return message
    }

    private mutating func record(_ key: ConfigurationKey, at origin: ConfigurationOrigin) {
        origins[key] = origin
        assignmentCount += 1
        assignmentOrder[key] = assignmentCount
    }

    private mutating func reset(_ key: ConfigurationKey) {
        let defaults = Configuration()
        switch key {
        case .applicationCode: configuration.applicationCode = defaults.applicationCode
        case .serverURL: configuration.serverURL = defaults.serverURL
        case .apiTokenFile: configuration.apiTokenFile = defaults.apiTokenFile
        case .hwid: configuration.hwid = defaults.hwid
        case .userID: configuration.userID = defaults.userID
        case .deviceType: configuration.deviceType = defaults.deviceType
        case .requestTimeout: configuration.requestTimeout = defaults.requestTimeout
        case .caFile: configuration.caFile = defaults.caFile
        case .cacheMaxAge: configuration.cacheMaxAge = defaults.cacheMaxAge
        case .refreshInterval: configuration.refreshInterval = defaults.refreshInterval
        case .sessionTimeout: configuration.sessionTimeout = defaults.sessionTimeout
        case .sessionMaxAge: configuration.sessionMaxAge = defaults.sessionMaxAge
        case .refreshThrottle: configuration.refreshThrottle = defaults.refreshThrottle
        case .disableThrottle: configuration.disableThrottle = defaults.disableThrottle
        case .lifecycle: configuration.lifecycle = defaults.lifecycle
        case .localFlagsFile: configuration.localFlagsFile = defaults.localFlagsFile
        case .seedFile: configuration.seedFile = defaults.seedFile
        case .retryBackoff: configuration.retryBackoff = defaults.retryBackoff
        case .refreshSpread: configuration.refreshSpread = defaults.refreshSpread
        case .sessionStartDelay: configuration.sessionStartDelay = defaults.sessionStartDelay
        case .socketPath: configuration.socketPath = defaults.socketPath
        case .socketMode: configuration.socketMode = defaults.socketMode
        case .stateDirectory: configuration.stateDirectory = defaults.stateDirectory
        case .controlGroups: configuration.controlGroups = defaults.controlGroups
        case .maxConnections: configuration.maxConnections = defaults.maxConnections
        case .maxLineBytes: configuration.maxLineBytes = defaults.maxLineBytes
        case .maxPendingBytes: configuration.maxPendingBytes = defaults.maxPendingBytes
        case .maxSubscriptions: configuration.maxSubscriptions = defaults.maxSubscriptions
        case .maxListenKeys: configuration.maxListenKeys = defaults.maxListenKeys
        case .idleConnectionTimeout: configuration.idleConnectionTimeout = defaults.idleConnectionTimeout
        case .logLevel: configuration.logLevel = defaults.logLevel
        case .metricsFile: configuration.metricsFile = defaults.metricsFile
        case .metricsInterval: configuration.metricsInterval = defaults.metricsInterval
        case .listenAddress: configuration.ofrepListenAddress = defaults.ofrepListenAddress
        case .tokenFile: configuration.ofrepTokenFile = defaults.ofrepTokenFile
        case .connectionLimit: configuration.ofrepConnectionLimit = defaults.ofrepConnectionLimit
        case .idleTimeout: configuration.ofrepIdleTimeout = defaults.ofrepIdleTimeout
        case .requestRate: configuration.ofrepRequestRate = defaults.ofrepRequestRate
        case .allowedOrigins: configuration.ofrepAllowedOrigins = defaults.ofrepAllowedOrigins
        case .bus: configuration.bus = defaults.bus
        case .busName: configuration.busName = defaults.busName
        case .varlinkSocketPath: configuration.varlinkSocketPath = defaults.varlinkSocketPath
        case .otlpEndpoint: configuration.otlpEndpoint = defaults.otlpEndpoint
        case .exportUserId: configuration.exportUserId = defaults.exportUserId
        case .exportFlagValues: configuration.exportFlagValues = defaults.exportFlagValues
        case .maxEvaluationRecords: configuration.maxEvaluationRecords = defaults.maxEvaluationRecords
        }
    }

    // MARK: Text helpers

    /// systemd's blanks; `\r` among them so that files with CRLF line ends read the same.
    static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\r" || scalar == "\n"
    }

    /// Splits on `\n` by scalars, since `\r\n` is a single Character and would hide the line break.
    private static func lines(of text: String) -> [String] {
        text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            var line = String(String.UnicodeScalarView(line))
            if line.unicodeScalars.last == "\r" { line.unicodeScalars.removeLast() }
            return line
        }
    }

    /// `text` without systemd's blanks (spaces, tabs, line ends) at either end.
    public static func trimmed(_ text: some StringProtocol) -> String {
        let scalars = text.unicodeScalars
        var start = scalars.startIndex
        var end = scalars.endIndex
        while start < end, isBlank(scalars[start]) { start = scalars.index(after: start) }
        while end > start, isBlank(scalars[scalars.index(before: end)]) { end = scalars.index(before: end) }
        return String(String.UnicodeScalarView(scalars[start..<end]))
    }

    /// True when the line ends in a backslash that is not itself escaped, systemd's continuation rule.
    private static func endsInContinuation(_ line: String) -> Bool {
        var escaped = false
        for scalar in line.unicodeScalars {
            escaped = escaped ? false : scalar == "\\"
        }
        return escaped
    }

    /// The text with control characters spelled as escapes, so that a message never carries raw control bytes.
    static func quoted(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if scalar.properties.generalCategory == .control {
                result += scalar.escaped(asASCII: true)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
