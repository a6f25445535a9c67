import FlagsCore
import FlagsProtocol
import UnixIO

/// One client connection, owned by the server loop's thread and touched by nothing else.
final class Connection: IdentifiedConnection {
    /// Unique for the daemon's life; file descriptors are reused, ids are not.
    let id: UInt64
    let fd: Int32
    let peer: PeerCredentials
    var framer: LineFramer
    /// Unsent output: answers are written into `output.bytes`, shared listings queued by reference.
    var output = OutputQueue()
    /// Lines wait unread because more than `MaxPendingBytes` of output waits (`ServerLimits.takesRequests`).
    var heldBack = false
    /// A request that may wait is being carried out; later lines wait so that responses keep request order.
    var busy = false
    /// Set after an unrecoverable framing error: send what is queued, then close.
    var closeAfterFlush = false
    /// The peer sent its last byte (it may only have shut down its writing side and still read): answer the
    /// lines already received, flush, then close.
    var inputClosed = false
    /// Subscription id to its keys (nil: every key), in creation order for deterministic fan-out.
    var subscriptions: [(id: String, keys: Set<FlagKey>?)] = []
    /// What the subscriptions' keys count against `MaxListenKeys` (`ListenKeyCost`).
    var listenKeyUnits = 0
    /// The epoll events currently registered.
    var interest: Epoll.Events = []
    var peerUID: UInt32? { peer.uid }
    /// Something happened on the connection since the last idle sweep (`LineHandler.sweepIdle`).
    var activeSinceSweep = true
    private var cachedGroups: [UInt32]??

    init(id: UInt64, fd: Int32, peer: PeerCredentials, maxLineBytes: Int) {
        self.id = id
        self.fd = fd
        self.peer = peer
        self.framer = LineFramer(maximumLineBytes: maxLineBytes)
    }

    var pendingBytes: Int { output.pendingBytes }

    /// The peer's supplementary groups, asked of the kernel once.
    var supplementaryGroups: [UInt32]? {
        if let cachedGroups { return cachedGroups }
        let groups = UnixSocket.peerGroups(fd)
        cachedGroups = .some(groups)
        return groups
    }
}
