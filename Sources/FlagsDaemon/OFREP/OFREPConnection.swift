import OFREP
import UnixIO

/// One OFREP client connection, owned by the listener's loop thread: its request parser, its unsent answers
/// and its deadline.
final class OFREPConnection {
    let fd: Int32
    /// Who the rate rule counts this connection as (`uid:1000`, `ip:127.0.0.1`).
    let peer: String
    var parser: HTTPRequestParser
    var output: [UInt8] = []
    var outputOffset = 0
    /// When the connection is closed unless a whole request has arrived (monotonic nanoseconds).
    var deadline: UInt64
    /// Set once an answer says `Connection: close`: nothing more is read or answered.
    var closesAfterFlush = false
    /// The events epoll watches for now.
    var watching: Epoll.Events = .input

    init(fd: Int32, peer: String, parser: HTTPRequestParser, deadline: UInt64) {
        self.fd = fd
        self.peer = peer
        self.parser = parser
        self.deadline = deadline
    }

    var pendingCount: Int { output.count - outputOffset }
}
