public import FlagsProtocol

extension DaemonConnection {
    /// Sends a call and reads its answer as the method's result type; `.protocolViolation` when the answer has
    /// another shape.
    public func call<Answer: CallResult>(_ call: Call, as type: Answer.Type) throws(ClientError) -> Answer {
        let value = try self.call(call)
        guard let answer = Answer(result: value) else {
            throw .protocolViolation("a \(call.method) result without its members: \(value.serialized().prefix(200))")
        }
        return answer
    }
}
