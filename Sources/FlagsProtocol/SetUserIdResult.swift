public import FlagsCore

/// The result of `setUserId`: `{"userId":…}`, the user now in effect (the HWID after `""`).
public struct SetUserIdResult: CallResult, Equatable {
    public var userId: String

    public init(userId: String) {
        self.userId = userId
    }

    public init?(result: JSONValue) {
        guard let userId = result["userId"]?.stringValue else { return nil }
        self.init(userId: userId)
    }

    public func write(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"userId":"#.utf8)
        JSONValue.writeString(userId, to: &output)
        output.append(UInt8(ascii: "}"))
    }
}
