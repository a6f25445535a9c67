public import FlagsCore

/// The result of `pushRegistered`: `{"refreshStarted":BOOL}`, whether the call started a refresh.
public struct PushRegisteredResult: CallResult, Equatable {
    public var refreshStarted: Bool

    public init(refreshStarted: Bool) {
        self.refreshStarted = refreshStarted
    }

    public init?(result: JSONValue) {
        guard let started = result["refreshStarted"]?.boolValue else { return nil }
        self.init(refreshStarted: started)
    }

    public func write(to output: inout [UInt8]) {
        output.append(contentsOf: (refreshStarted ? #"{"refreshStarted":true}"# : #"{"refreshStarted":false}"#).utf8)
    }
}
