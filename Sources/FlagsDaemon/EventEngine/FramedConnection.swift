import FlagsProtocol
import UnixIO

/// A client of a framed protocol (the line socket's lines, Varlink's NUL-ended messages), owned by the loop's
/// thread and touched by nothing else: its socket and peer, its framer and output, and the states that decide
/// whether its next message is read. Each protocol's connection adds what it streams (subscriptions, a `Listen`).
class FramedConnection: IdentifiedConnection {
    /// What one read from the peer brought.
    enum Input {
        /// Bytes went to the framer.
        case bytes
        /// Nothing to read now (the socket would block).
        case nothing
        /// The peer sent its last byte.
        case end
        /// The socket failed: the connection must be closed.
        case failed
    }

    /// Unique for the daemon's life; file descriptors are reused, ids are not.
    let id: UInt64
    let fd: Int32
    let peer: PeerCredentials
    /// Unchecked at run time, as `EventLoop` says of the request path's state.
    @exclusivity(unchecked) var framer: Framer
    /// Unsent output: answers are written into `output.bytes`, shared listings queued by reference (unchecked).
    @exclusivity(unchecked) var output = OutputQueue()
    /// Messages wait unread because more than `MaxPendingBytes` of output waits (`ServerLimits.takesRequests`).
    var heldBack = false
    /// A call that may wait is being carried out; later messages wait so that answers keep call order.
    var busy = false
    /// Set after an unrecoverable framing error: send what is queued, then close.
    var closeAfterFlush = false
    /// The peer sent its last byte (it may only have shut down its writing side and still read): answer the
    /// messages already received, flush, then close.
    var inputClosed = false
    /// What the connection's listen keys count against `MaxListenKeys` (`ListenBounds`).
    var listenKeyUnits = 0
    /// The epoll events currently registered.
    var interest: Epoll.Events = []
    var peerUID: UInt32? { peer.uid }
    /// Something happened on the connection since the last idle sweep.
    var activeSinceSweep = true
    private var cachedGroups: [UInt32]??

    init(id: UInt64, fd: Int32, peer: PeerCredentials, framer: Framer) {
        self.id = id
        self.fd = fd
        self.peer = peer
        self.framer = framer
    }

    var pendingBytes: Int { output.pendingBytes }

    /// The peer's supplementary groups, asked of the kernel once.
    var supplementaryGroups: [UInt32]? {
        if let cachedGroups { return cachedGroups }
        let groups = UnixSocket.peerGroups(fd)
        cachedGroups = .some(groups)
        return groups
    }

    /// Reads what the socket holds into the framer, through `buffer` (the engine's one read buffer).
    func receive(through buffer: inout [UInt8]) -> Input {
        let count: Int
        do {
            let result = buffer.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in try Descriptor.readAvailable(fd, into: buffer) }
            }
            guard let read = try result.get() else { return .nothing }
            count = read
        } catch {
            return .failed
        }
        if count == 0 { return .end }
        buffer.withUnsafeBytes { raw in
            framer.append(UnsafeRawBufferPointer(rebasing: raw[0..<count]))
        }
        return .bytes
    }

    /// The epoll events this connection waits for now. A streaming connection (a Varlink `Listen`) still reads:
    /// a message it sends ends the stream first.
    func wantedEvents(draining: Bool) -> Epoll.Events {
        // After the end of input, EPOLLRDHUP would be reported again and again: only a full hangup matters then.
        var events: Epoll.Events = inputClosed ? .hangup : .readHangup
        if !busy, !heldBack, !closeAfterFlush, !inputClosed, !draining {
            events.insert(.input)
        }
        if pendingBytes > 0 { events.insert(.output) }
        return events
    }
}

extension EventEngine where Handler.Connection: FramedConnection {
    /// Closes the connections idle since the last call: nothing received, no call in flight, no output owed, no
    /// message held back, and not `listening`; then starts counting again. Returns how many it closed. A
    /// handler calls it once per `IdleConnectionTimeout`, so a connection goes between once and twice the
    /// timeout after its last byte.
    func closeIdleConnections(listening: (Connection) -> Bool) -> Int {
        var closed = 0
        for connection in Array(connections.values) {
            let idle =
                !connection.activeSinceSweep && !listening(connection) && !connection.busy
                && connection.pendingBytes == 0 && !connection.heldBack
            connection.activeSinceSweep = false
            guard idle else { continue }
            close(connection)
            closed += 1
        }
        return closed
    }
}
