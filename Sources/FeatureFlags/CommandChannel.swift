import Dispatch
import FlagsCore
import FlagsProtocol
import UnixIO

/// The connection for commands (refresh, impressions, user and app state), apart from the subscription so
/// that a slow refresh never holds up the mirror.
///
/// Opened on first use and kept; every command runs on `queue`, one at a time, in the order it was given.
final class CommandChannel: Sendable {
    let socketPath: String
    let queue = DispatchQueue(label: "pwflags.commands")
    private let connection = Locked<DaemonConnection?>(nil)

    init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// Sends a call and waits for its answer, read as the method's result type. Call on `queue`.
    func perform<Answer: CallResult>(_ call: Call, as type: Answer.Type) -> Result<Answer, ClientError> {
        send { connection throws(ClientError) in try connection.call(call, as: type) }
    }

    /// Sends a call without an id: the daemon answers nothing. Call on `queue`.
    func notify(_ call: Call) {
        _ = send { connection throws(ClientError) in try connection.notify(call) }
    }

    /// Closes the kept connection.
    func close() {
        connection.withLock { $0 = nil }
    }

    /// Runs `body` on the kept connection, or a new one; once more on a new one when the kept connection
    /// turns out closed, which is what a daemon restart looks like from here.
    private func send<Value: Sendable>(
        _ body: (DaemonConnection) throws(ClientError) -> Value
    ) -> Result<Value, ClientError> {
        connection.withLock { kept in
            var reused = kept != nil
            while true {
                let current: DaemonConnection
                if let existing = kept {
                    current = existing
                } else {
                    do throws(ClientError) {
                        current = try DaemonConnection(socketPath: socketPath)
                    } catch {
                        return .failure(error)
                    }
                    kept = current
                }
                do throws(ClientError) {
                    return .success(try body(current))
                } catch {
                    switch error {
                    case .disconnected where reused:
                        kept = nil
                        reused = false
                        continue
                    case .disconnected, .protocolViolation, .unreachable:
                        kept = nil
                    case .rpc:
                        break
                    }
                    return .failure(error)
                }
            }
        }
    }
}
