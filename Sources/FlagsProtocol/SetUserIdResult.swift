public import FlagsCore

/// The result of `setUserId`: `{"userId":…}`, the user now in effect (the HWID after `""`).
public struct SetUserIdResult: CallResult, Equatable {
    public var userId: String
    /// Set when Pushwoosh's `Retry-After` holds the new user's request back until this time (F3): the user
    /// changed and the old flags are gone, but the request waits.
    public var heldUntil: String?

    public init(userId: String, heldUntil: String? = nil) {
        self.userId = userId
        self.heldUntil = heldUntil
    }

    public init?(result: JSONValue) {
        guard let userId = result["userId"]?.stringValue else { return nil }
        self.init(userId: userId, heldUntil: result["heldUntil"]?.stringValue)
    }

    public func write(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"userId":"#.utf8)
        JSONValue.writeString(userId, to: &output)
        if let heldUntil {
            output.append(contentsOf: #","heldUntil":"#.utf8)
            JSONValue.writeString(heldUntil, to: &output)
        }
        output.append(UInt8(ascii: "}"))
    }
}
