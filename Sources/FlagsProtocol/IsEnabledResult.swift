public import FlagsCore

/// The result of `isEnabled`: `{"enabled":BOOL,"found":BOOL}`; `enabled` is the default when not `found`.
public struct IsEnabledResult: CallResult, Equatable {
    public var enabled: Bool
    public var found: Bool

    public init(enabled: Bool, found: Bool) {
        self.enabled = enabled
        self.found = found
    }

    /// The answer for `flag`, or `fallback` when there is none.
    public init(flag: Flag?, default fallback: Bool) {
        self.init(enabled: flag?.isEnabled ?? fallback, found: flag != nil)
    }

    public init?(result: JSONValue) {
        guard let enabled = result["enabled"]?.boolValue, let found = result["found"]?.boolValue else { return nil }
        self.init(enabled: enabled, found: found)
    }

    public func write(to output: inout [UInt8]) {
        output.append(contentsOf: (enabled ? #"{"enabled":true"# : #"{"enabled":false"#).utf8)
        output.append(contentsOf: (found ? #","found":true}"# : #","found":false}"#).utf8)
    }

    /// Appends the whole response line, the id's text echoed as sent: the fast path, which allocates nothing.
    public static func writeLine(id: ArraySlice<UInt8>, enabled: Bool, found: Bool, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        output.append(contentsOf: id)
        output.append(contentsOf: (enabled ? #","result":{"enabled":true"# : #","result":{"enabled":false"#).utf8)
        output.append(contentsOf: (found ? #","found":true}}"# : #","found":false}}"#).utf8)
        output.append(UInt8(ascii: "\n"))
    }
}
