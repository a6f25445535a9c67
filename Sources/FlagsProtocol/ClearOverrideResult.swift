public import FlagsCore

/// The result of `clearOverride`: `{"cleared":[KEY...]}`, the keys whose override was removed, sorted (empty when
/// there was none).
public struct ClearOverrideResult: CallResult, Equatable {
    public var cleared: [String]

    public init(cleared: [String]) {
        self.cleared = cleared
    }

    public init?(result: JSONValue) {
        guard let list = result["cleared"]?.arrayValue else { return nil }
        let keys = list.compactMap(\.stringValue)
        guard keys.count == list.count else { return nil }
        self.init(cleared: keys)
    }

    public func write(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"cleared":["#.utf8)
        for (position, key) in cleared.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            JSONValue.writeString(key, to: &output)
        }
        output.append(contentsOf: "]}".utf8)
    }
}
