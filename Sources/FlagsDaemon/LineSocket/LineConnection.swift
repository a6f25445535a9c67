import FlagsCore
import FlagsProtocol
import UnixIO

/// One client of the line socket: a framed connection of lines, and its subscriptions.
final class LineConnection: FramedConnection {
    /// Subscription id to its keys (nil: every key), in creation order for deterministic fan-out.
    var subscriptions: [(id: String, keys: Set<FlagKey>?)] = []

    init(id: UInt64, fd: Int32, peer: PeerCredentials, maxLineBytes: Int) {
        super.init(id: id, fd: fd, peer: peer, framer: Framer(.newline, maximumBytes: maxLineBytes))
    }

    /// The peer, as the flag service's policy judges it.
    var caller: Caller {
        Caller(surface: .line, uid: peer.uid, gid: peer.gid) { [unowned self] in self.supplementaryGroups }
    }
}
