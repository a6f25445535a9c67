import OFREP
import UnixIO

/// One OFREP client connection, owned by the event loop's thread: its request parser, its unsent answers
/// and its deadline.
final class OFREPConnection: EngineConnection {
    let fd: Int32
    /// Who the rate rule counts this connection as (`uid:1000`, `ip:127.0.0.1`).
    let peer: String
    /// The Unix peer's user id, for its share of the connections; nil on TCP.
    let peerUID: UInt32?
    var parser: HTTPRequestParser
    /// Answers not yet sent, in order. Heads and bodies are separate arrays queued by reference: a bulk body
    /// is shared with the snapshot's cache, not copied per answer, and they go out gathered in one `sendmsg`.
    var output = OutputQueue()
    /// The bytes in `output` not yet sent.
    var pendingCount: Int { output.pendingBytes }
    /// When the connection is closed unless a whole request has arrived (monotonic nanoseconds).
    var deadline: UInt64
    /// Set once an answer says `Connection: close`: nothing more is read or answered.
    var closesAfterFlush = false
    /// The epoll events currently registered.
    var interest: Epoll.Events = []
    /// True once the client presented the token (or none is asked for): only such a connection keeps its slot
    /// when the listener is full and a new client arrives.
    var isAuthenticated: Bool
    /// The order connections were accepted in: the oldest connection without the token is the first to go.
    let sequence: UInt64
    /// True once the connection is an event stream: it reads nothing more, and `deadline` is its next heartbeat.
    var isStream = false
    /// A 401 waiting for its turn (`DelayedRefusals`): nothing more is read meanwhile.
    var delayedRefusal: HTTPResponse?
    /// When an event stream is closed, so that the client reconnects (monotonic nanoseconds).
    var streamEnds: UInt64 = .max

    init(
        fd: Int32, peer: String, peerUID: UInt32?, parser: HTTPRequestParser, deadline: UInt64, isAuthenticated: Bool,
        sequence: UInt64
    ) {
        self.fd = fd
        self.peer = peer
        self.peerUID = peerUID
        self.parser = parser
        self.deadline = deadline
        self.isAuthenticated = isAuthenticated
        self.sequence = sequence
    }

    /// Queues bytes to send.
    func enqueue(_ bytes: [UInt8]) {
        output.append(bytes)
    }

    /// Queues an answer: its head, then its body (none for 304).
    func enqueue(_ response: HTTPResponse, closing: Bool) {
        enqueue(response.head(closing: closing))
        if response.status != 304 { enqueue(response.body) }
    }
}
