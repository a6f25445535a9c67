public import FlagsCore

/// The fields every call carries in its `request` object (docs/behaviour.md, Talking to Pushwoosh).
public struct CommonFields: Sendable, Equatable {
    /// The Pushwoosh application code, sent as `application`.
    public var applicationCode: String
    /// The device id, sent as `hwid`.
    public var hwid: String
    /// The current user id (the HWID until one is set), sent as `userId`.
    public var userId: String
    /// The pwflagsd version, sent as `v` and in the `User-Agent` header.
    public var version: String
    /// Sent as `device_type` only when set.
    public var deviceType: Int?

    public init(applicationCode: String, hwid: String, userId: String, version: String, deviceType: Int? = nil) {
        self.applicationCode = applicationCode
        self.hwid = hwid
        self.userId = userId
        self.version = version
        self.deviceType = deviceType
    }

    /// The members of the `request` object shared by every method.
    public var requestMembers: [String: JSONValue] {
        var members: [String: JSONValue] = [
            "application": .string(applicationCode),
            "hwid": .string(hwid),
            "userId": .string(userId),
            "v": .string(version),
        ]
        if let deviceType { members["device_type"] = .number(Double(deviceType)) }
        return members
    }
}
