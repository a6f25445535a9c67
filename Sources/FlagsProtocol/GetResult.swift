public import FlagsCore

/// The result of `get`: `{"flag":FLAG}`, or `{"flag":null}` when there is no such flag.
public struct GetResult: CallResult, Equatable {
    public var flag: Flag?

    public init(flag: Flag?) {
        self.flag = flag
    }

    public init?(result: JSONValue) {
        guard let member = result["flag"] else { return nil }
        if member.isNull {
            self.flag = nil
        } else {
            guard let flag = Flag(wire: member) else { return nil }
            self.flag = flag
        }
    }

    public func write(to output: inout [UInt8]) {
        Self.write(encodedFlag: flag?.wireBytes, to: &output)
    }

    /// Appends the result object around a flag object already encoded (`Flag.wireBytes`).
    public static func write(encodedFlag: [UInt8]?, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"flag":"#.utf8)
        if let encodedFlag { output.append(contentsOf: encodedFlag) } else { output.append(contentsOf: "null".utf8) }
        output.append(UInt8(ascii: "}"))
    }

    /// Appends the whole response line, the id's text echoed as sent: the fast path, which allocates nothing.
    public static func writeLine(id: ArraySlice<UInt8>, encodedFlag: [UInt8]?, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        output.append(contentsOf: id)
        output.append(contentsOf: #","result":{"flag":"#.utf8)
        if let encodedFlag { output.append(contentsOf: encodedFlag) } else { output.append(contentsOf: "null".utf8) }
        output.append(contentsOf: "}}\n".utf8)
    }
}
