public import FlagsCore

/// A method's result object: the daemon writes it, the client library and the CLI read it back.
///
/// Each method has one type, so that its shape is written in one place and read in one place.
public protocol CallResult: Sendable {
    /// Reads a result object; nil when it lacks a member this type needs.
    init?(result: JSONValue)

    /// Appends the result object, compact, as the daemon sends it.
    func write(to output: inout [UInt8])
}

extension CallResult {
    /// The result object as a value, read back from what `write(to:)` writes (for printing it).
    public var jsonValue: JSONValue {
        var output: [UInt8] = []
        write(to: &output)
        return (try? JSONValue(parsing: output)) ?? .null
    }
}
