import FlagsCore
import FlagsProtocol
import UnixIO

/// One Varlink client: a framed connection of NUL-ended messages, and its `Listen` once it streams.
final class VarlinkConnection: FramedConnection {
    /// The keys a `Listen` call streams changes of (nil: every key).
    struct Listen {
        let keys: Set<FlagKey>?
    }

    /// The connection's `Listen` call, once it streams: it never ends, so no later call is read (as sd-varlink
    /// does, replies to one call are never interleaved with another's).
    var listen: Listen?

    init(id: UInt64, fd: Int32, peer: PeerCredentials, maxMessageBytes: Int) {
        super.init(id: id, fd: fd, peer: peer, framer: Framer(.nul, maximumBytes: maxMessageBytes))
    }

    /// The peer, as the flag service's policy judges it.
    var caller: Caller {
        Caller(surface: .varlink, uid: peer.uid, gid: peer.gid) { [unowned self] in self.supplementaryGroups }
    }
}

extension VarlinkConnection: ChangeListener {
    var listenCount: Int { listen == nil ? 0 : 1 }

    func listenKeys(at index: Int) -> Set<FlagKey>? { listen?.keys }

    func queue(_ body: ByteChunk, forListen index: Int) {
        output.append(sharing: body)
    }
}
