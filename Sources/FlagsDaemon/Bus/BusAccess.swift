import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Who may do what on the bus: exactly who may on the socket, checked by the daemon itself so that a mistake
/// in the bus policy alone lets nobody in.
///
/// Reading (and `Refresh`, `LogImpression`, as on the socket) is for whoever may open the line socket: the
/// socket file's owner, its group when the mode lets the group write, everyone when it lets others write
/// (root and the daemon's own user always). The control calls follow `ControlGroups` (`AccessPolicy`).
struct BusAccess: Sendable {
    /// The socket file's owner, group and mode, as at start; nil lets only root and the daemon's user read.
    struct SocketFile: Sendable, Equatable {
        var uid: UInt32
        var gid: UInt32
        var mode: UInt32
    }

    var socketFile: SocketFile?
    var control: AccessPolicy

    /// The owner, group and mode of the socket file at `path` (nil when it cannot be read).
    static func socketFile(at path: String) -> SocketFile? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return SocketFile(uid: info.st_uid, gid: info.st_gid, mode: UInt32(info.st_mode) & 0o777)
    }

    func mayRead(_ peer: BusPeer) -> Bool {
        if control.isPrivileged(credentials(peer)) { return true }
        guard let socketFile else { return false }
        if socketFile.mode & 0o002 != 0 { return true }
        if peer.uid == socketFile.uid, socketFile.mode & 0o200 != 0 { return true }
        guard socketFile.mode & 0o020 != 0 else { return false }
        return peer.gid == socketFile.gid || peer.supplementaryGroups.contains(socketFile.gid)
    }

    func mayControl(_ peer: BusPeer) -> Bool {
        control.mayControl(credentials(peer)) { peer.supplementaryGroups }
    }

    private func credentials(_ peer: BusPeer) -> PeerCredentials {
        PeerCredentials(pid: 0, uid: peer.uid, gid: peer.gid)
    }
}
