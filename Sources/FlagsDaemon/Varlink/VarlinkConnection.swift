import FlagsCore
import FlagsProtocol
import UnixIO

/// One Varlink client, owned by the Varlink engine's thread and touched by nothing else.
final class VarlinkConnection: IdentifiedConnection {
    /// The keys a `Listen` call streams changes of (nil: every key).
    struct Listen {
        let keys: Set<FlagKey>?
    }

    /// Unique for the daemon's life; file descriptors are reused, ids are not.
    let id: UInt64
    let fd: Int32
    let peer: PeerCredentials
    var framer: VarlinkFramer
    var output = OutputQueue()
    /// Calls wait unread because more than `MaxPendingBytes` of output waits (`ServerLimits.takesRequests`).
    var heldBack = false
    /// A call that may wait is being carried out; later calls wait so that replies keep call order.
    var busy = false
    /// Set after a message over the limit: send what is queued, then close.
    var closeAfterFlush = false
    /// The peer sent its last byte: answer the calls already received, flush, then close.
    var inputClosed = false
    /// The connection's `Listen` call, once it streams: it never ends, so no later call is read (as sd-varlink
    /// does, replies to one call are never interleaved with another's).
    var listen: Listen?
    /// What the listen's keys count against `MaxListenKeys` (`ListenKeyCost`).
    var listenKeyUnits = 0
    var interest: Epoll.Events = []
    var peerUID: UInt32? { peer.uid }
    /// Something happened on the connection since the last idle sweep.
    var activeSinceSweep = true
    private var cachedGroups: [UInt32]??

    init(id: UInt64, fd: Int32, peer: PeerCredentials, maxMessageBytes: Int) {
        self.id = id
        self.fd = fd
        self.peer = peer
        self.framer = VarlinkFramer(maximumMessageBytes: maxMessageBytes)
    }

    var pendingBytes: Int { output.pendingBytes }

    /// The peer's supplementary groups, asked of the kernel once.
    var supplementaryGroups: [UInt32]? {
        if let cachedGroups { return cachedGroups }
        let groups = UnixSocket.peerGroups(fd)
        cachedGroups = .some(groups)
        return groups
    }

    /// Reads what the socket holds into the framer, through `buffer` (the loop's one read buffer).
    func receive(through buffer: inout [UInt8]) -> Connection.Input {
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

    /// The epoll events this connection waits for now.
    func wantedEvents(draining: Bool) -> Epoll.Events {
        var events: Epoll.Events = inputClosed ? .hangup : .readHangup
        if !busy, !heldBack, !closeAfterFlush, !inputClosed, !draining, listen == nil {
            events.insert(.input)
        }
        if pendingBytes > 0 { events.insert(.output) }
        return events
    }
}
