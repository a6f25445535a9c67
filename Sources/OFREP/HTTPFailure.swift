/// Why the parser refused a request: the status the listener answers with before it closes the connection.
public struct HTTPFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// 400, 413, 417, 431, 501 or 505.
    public var status: Int
    /// Said in the answer's `errorDetails` and in the debug log; never echoes the request's bytes.
    public var reason: String

    public init(_ status: Int, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    public var description: String { "\(status): \(reason)" }
}
