public import FlagsCore

/// The lines the daemon writes: responses and notifications, compact and newline-terminated.
public enum Message {
    /// Appends `{"jsonrpc":"2.0","id":ID,"result":RESULT}\n`.
    public static func writeResult(id: JSONValue, result: JSONValue, to output: inout [UInt8]) {
        writeResult(id: RequestID(id), result: result, to: &output)
    }

    /// Appends `{"jsonrpc":"2.0","id":ID,"result":RESULT}\n` with the id as the request sent it.
    public static func writeResult(id: RequestID, result: JSONValue, to output: inout [UInt8]) {
        writeResult(id: id, to: &output) { result.write(to: &$0) }
    }

    /// Appends `{"jsonrpc":"2.0","id":ID,"result":RESULT}\n` with a method's typed result.
    public static func writeResult(id: RequestID, result: some CallResult, to output: inout [UInt8]) {
        writeResult(id: id, to: &output) { result.write(to: &$0) }
    }

    /// Appends a result line for a result whose type is known only at run time (the methods that may wait).
    public static func writeResult(id: RequestID, result: any CallResult, to output: inout [UInt8]) {
        writeResult(id: id, to: &output) { result.write(to: &$0) }
    }

    /// Appends a result line whose result object `writeBody` writes itself.
    public static func writeResult(id: JSONValue, to output: inout [UInt8], writeBody: (inout [UInt8]) -> Void) {
        writeResult(id: RequestID(id), to: &output, writeBody: writeBody)
    }

    /// Appends a result line whose result object `writeBody` writes itself (the fast path for flags).
    public static func writeResult(id: RequestID, to output: inout [UInt8], writeBody: (inout [UInt8]) -> Void) {
        writeResultPrefix(id: id, to: &output)
        writeBody(&output)
        output.append(contentsOf: resultSuffix)
    }

    /// `{"jsonrpc":"2.0","id":ID,"result":`: a result line up to its result object, for callers that send the
    /// object from a shared buffer.
    public static func writeResultPrefix(id: RequestID, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        id.write(to: &output)
        output.append(contentsOf: #","result":"#.utf8)
    }

    /// What ends a result line after its result object.
    public static let resultSuffix: [UInt8] = Array("}\n".utf8)

    /// Appends `{"jsonrpc":"2.0","id":ID,"error":{…}}\n`.
    public static func writeError(id: JSONValue, error: RPCError, to output: inout [UInt8]) {
        writeError(id: RequestID(id), error: error, to: &output)
    }

    /// Appends `{"jsonrpc":"2.0","id":ID,"error":{…}}\n` with the id as the request sent it.
    public static func writeError(id: RequestID, error: RPCError, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        id.write(to: &output)
        output.append(contentsOf: #","error":"#.utf8)
        error.jsonValue.write(to: &output)
        output.append(contentsOf: "}\n".utf8)
    }
}
