public import FlagsCore

/// The result of `metrics`: `{"text": EXPOSITION}`, the daemon's counters in the format asked for.
public struct MetricsResult: CallResult, Equatable {
    public var text: String

    public init(text: String) {
        self.text = text
    }

    public init?(result: JSONValue) {
        guard let text = result["text"]?.stringValue else { return nil }
        self.text = text
    }

    public func write(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"text":"#.utf8)
        JSONValue.writeString(text, to: &output)
        output.append(UInt8(ascii: "}"))
    }
}
