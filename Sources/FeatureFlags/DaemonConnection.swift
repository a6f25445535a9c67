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
    /// The socket this connection was opened on.
    public let socketPath: String
    private let fd: Int32
    private var framer = Framer(.newline, maximumBytes: 64 * 1024 * 1024)
    private var nextID = 1
    /// Notifications that arrived while waiting for an answer, in order.
    private var queuedNotifications: [(method: String, params: JSONValue)] = []

    /// Connects to the daemon; `.unreachable` names the socket path and the reason.
    public init(socketPath: String) throws(ClientError) {
        self.socketPath = socketPath
        do {
            self.fd = try UnixSocket.connect(to: socketPath)
        } catch {
            throw .unreachable(socketPath: socketPath, reason: Self.reason(for: error, at: socketPath))
        }
    }

    /// Why a connect failed. The kernel refuses a path that is no socket at all (a directory, a regular file)
    /// with ECONNREFUSED, as it does a socket nobody listens on: say which, so that a wrong `--socket` is not
    /// taken for a daemon that is down.
    private static func reason(for error: SystemError, at path: String) -> String {
        var info = stat()
        guard error.errno == ECONNREFUSED, stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFSOCK else {
            return error.reason
        }
        return info.st_mode & S_IFMT == S_IFDIR ? "not a socket but a directory" : "not a socket"
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

    /// Waits at most `timeout` for the next notification; nil when none came in time.
    ///
    /// The `FeatureFlags` mirror uses it to wake up for its periodic `status` call without a second thread.
    public func nextNotification(timeout: Duration) throws(ClientError) -> (method: String, params: JSONValue)? {
        if !queuedNotifications.isEmpty { return queuedNotifications.removeFirst() }
        let deadline = ContinuousClock.now + timeout
        while true {
            guard let (method, params, _) = try readMessage(deadline: deadline) else { return nil }
            if let method { return (method, params) }
        }
    }

    private func send(_ request: Request) throws(ClientError) {
        // send(MSG_NOSIGNAL) rather than write: a library must not kill its host with SIGPIPE when the
        // daemon went away; the host may not ignore the signal the way pwflags does.
        do {
            try UnixSocket.sendAll(fd, request.encoded())
        } catch {
            throw .disconnected(socketPath: socketPath)
        }
    }

    private func readMessage() throws(ClientError) -> (
        method: String?, params: JSONValue, response: (id: JSONValue, result: Result<JSONValue, RPCError>)?
    ) {
        // Without a deadline the read never times out, so the optional is always filled in.
        guard let message = try readMessage(deadline: nil) else { throw .disconnected(socketPath: socketPath) }
        return message
    }

    /// Reads one message; nil when `deadline` passed before a whole line came.
    private func readMessage(deadline: ContinuousClock.Instant?) throws(ClientError) -> (
        method: String?, params: JSONValue, response: (id: JSONValue, result: Result<JSONValue, RPCError>)?
    )? {
        while true {
            switch framer.next() {
            case .message(let line):
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
                if let deadline, !waitReadable(until: deadline) { return nil }
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

    /// Polls until the socket is readable (or closed); false when `deadline` passed first.
    private func waitReadable(until deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero { return false }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = Int32(
                clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
            if Descriptor.waitReadable(fd, milliseconds: milliseconds) { return true }
        }
    }
}
