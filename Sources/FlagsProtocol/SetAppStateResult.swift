public import FlagsCore

/// The result of `setAppState`: `{"sessionStarted":BOOL}`, whether the call began a new session.
public struct SetAppStateResult: CallResult, Equatable {
    public var sessionStarted: Bool

    public init(sessionStarted: Bool) {
        self.sessionStarted = sessionStarted
    }

    public init?(result: JSONValue) {
        guard let started = result["sessionStarted"]?.boolValue else { return nil }
        self.init(sessionStarted: started)
    }

    public func write(to output: inout [UInt8]) {
        output.append(contentsOf: (sessionStarted ? #"{"sessionStarted":true}"# : #"{"sessionStarted":false}"#).utf8)
    }
}
