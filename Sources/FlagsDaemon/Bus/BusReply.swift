import FlagsCore
import FlagsProtocol

/// What a control call answers on the bus, built off the loop and written on the loop's thread.
enum BusReply: Sendable {
    /// `Refresh`: R11's status readable without parsing text (200 when it succeeded, 0 when no HTTP answer came).
    case refresh(succeeded: Bool, fromNetwork: Bool, status: Int, reason: String)
    /// `SetUserId`: the user now in effect and when a `Retry-After` hold ends ("" for none).
    case userId(String, heldUntil: String)
    /// `SetAppState`: whether the call started a session.
    case sessionStarted(Bool)
    /// `LogImpression`: the outcome word, and the R11 status of a failed send (0 otherwise).
    case impression(outcome: String, status: Int)
    /// A refused or failed call, as a D-Bus error.
    case error(name: String, text: String)

    /// Writes the reply to `call`.
    func message(answering call: BusMessage) -> BusMessage? {
        switch self {
        case .refresh(let succeeded, let fromNetwork, let status, let reason):
            let reply = call.reply()
            reply?.append(succeeded)
            reply?.append(fromNetwork)
            reply?.append(Int32(clamping: status))
            reply?.append(reason)
            return reply
        case .userId(let userId, let heldUntil):
            let reply = call.reply()
            reply?.append(userId)
            reply?.append(heldUntil)
            return reply
        case .sessionStarted(let started):
            let reply = call.reply()
            reply?.append(started)
            return reply
        case .impression(let outcome, let status):
            let reply = call.reply()
            reply?.append(outcome)
            reply?.append(Int32(clamping: status))
            return reply
        case .error(let name, let text):
            return call.errorReply(name: name, text: text)
        }
    }

    /// A socket error as a D-Bus error: the interface's own names, so a program tells them apart by name.
    static func failure(_ error: RPCError) -> BusReply {
        .error(name: "\(BusObject.interface).Error.Failed", text: error.message)
    }
}
