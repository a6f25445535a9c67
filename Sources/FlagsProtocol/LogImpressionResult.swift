public import FlagsCore

/// The result of `logImpression`: `{"outcome":"sent"}`, or `{"outcome":"failed","status":N}` with the R11
/// status of the failed send.
public enum LogImpressionResult: CallResult, Equatable {
    /// The event went to Pushwoosh.
    case sent
    /// The same flag, rule and state was already reported in this session.
    case duplicate
    /// There is no such flag; nothing was sent.
    case noFlag
    /// The local flags file is the source: the impression went to the log instead.
    case logged
    /// The flag is overridden on this device: nothing was sent, so that a QA device never skews an experiment.
    case overridden
    /// The send failed (status 0: it was never sent); the next `logImpression` tries again.
    case failed(status: Int)

    /// The `outcome` member.
    public var outcome: String {
        switch self {
        case .sent: "sent"
        case .duplicate: "duplicate"
        case .noFlag: "noFlag"
        case .logged: "logged"
        case .overridden: "overridden"
        case .failed: "failed"
        }
    }

    public init?(result: JSONValue) {
        switch result["outcome"]?.stringValue {
        case "sent": self = .sent
        case "duplicate": self = .duplicate
        case "noFlag": self = .noFlag
        case "logged": self = .logged
        case "overridden": self = .overridden
        case "failed":
            guard let status = result["status"]?.integerValue else { return nil }
            self = .failed(status: status)
        default: return nil
        }
    }

    public func write(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"outcome":"#.utf8)
        JSONValue.writeString(outcome, to: &output)
        if case .failed(let status) = self {
            output.append(contentsOf: #","status":"#.utf8)
            JSONValue.writeNumber(Double(status), to: &output)
        }
        output.append(UInt8(ascii: "}"))
    }
}
