public import FlagsCore
public import FlagsProtocol
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// One blocking connection to pwflagsd: send a call, read its answer; read notifications as they come.
///
/// Not thread-safe: one thread uses a connection at a time. The `FeatureFlags` mirror and the CLI build on it.
public final class DaemonConnection {
    public let socketPath: String
    private let fd: Int32
    private var framer = LineFramer(maximumLineBytes: 64 * 1024 * 1024)
    private var nextID = 1
    /// Notifications that arrived while waiting for an answer, in order.
    private var queuedNotifications: [(method: String, params: JSONValue)] = []

    /// Connects to the daemon; `.unreachable` names the socket path and the reason.
    public init(socketPath: String) throws(ClientError) {
        self.socketPath = socketPath
        do {
            self.fd = try UnixSocket.connect(to: socketPath)
        } catch {
            throw .unreachable(socketPath: socketPath, reason: error.reason)
        }
    }

    deinit {
        close(fd)
    }

    /// The descriptor, for callers that wait for input with `poll` themselves.
    public var fileDescriptor: Int32 { fd }

    /// Sends a call and waits for its answer.
    public func call(_ call: Call) throws(ClientError) -> JSONValue {
        let id = nextID
        nextID += 1
        try send(Request(id: .number(Double(id)), method: call.method, params: call.params))
        while true {
            let (method, params, response) = try readMessage()
            if let method {
                queuedNotifications.append((method, params))
                continue
            }
            guard let response, response.id == .number(Double(id)) else {
                throw .protocolViolation("an answer to another request")
            }
            switch response.result {
            case .success(let value): return value
            case .failure(let error): throw .rpc(error)
            }
        }
    }

    /// Sends a call without an id: the daemon carries it out and answers nothing.
    public func notify(_ call: Call) throws(ClientError) {
        try send(Request(id: nil, method: call.method, params: call.params))
    }

    /// Waits for the next notification.
    public func nextNotification() throws(ClientError) -> (method: String, params: JSONValue) {
        if !queuedNotifications.isEmpty { return queuedNotifications.removeFirst() }
        while true {
            let (method, params, _) = try readMessage()
            if let method { return (method, params) }
        }
    }

    private func send(_ request: Request) throws(ClientError) {
        do {
            try UnixSocket.writeAll(fd, request.encoded())
        } catch {
            throw .disconnected(socketPath: socketPath)
        }
    }

    private func readMessage() throws(ClientError) -> (
        method: String?, params: JSONValue, response: (id: JSONValue, result: Result<JSONValue, RPCError>)?
    ) {
        while true {
            switch framer.next() {
            case .line(let line):
                guard let message = IncomingMessage(line: line) else {
                    throw .protocolViolation(String(decoding: line.prefix(200), as: UTF8.self))
                }
                switch message {
                case .notification(let method, let params): return (method, params, nil)
                case .response(let id, let result): return (nil, .null, (id, result))
                }
            case .tooLong:
                throw .protocolViolation("a line longer than 64 MiB")
            case .needMore:
                let bytes: [UInt8]
                do {
                    bytes = try UnixSocket.read(fd)
                } catch {
                    throw .disconnected(socketPath: socketPath)
                }
                guard !bytes.isEmpty else { throw .disconnected(socketPath: socketPath) }
                framer.append(bytes)
            }
        }
    }
}
