public import FlagsCore

/// The result of `unlisten` and `reload`: `{}`, success and nothing more to say.
public struct EmptyResult: CallResult, Equatable {
    public init() {}

    /// Any object will do: a newer daemon may say more.
    public init?(result: JSONValue) {
        guard result.objectValue != nil else { return nil }
    }

    public func write(to output: inout [UInt8]) {
        output.append(contentsOf: "{}".utf8)
    }
}
