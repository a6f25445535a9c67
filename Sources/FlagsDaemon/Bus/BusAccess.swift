import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Who may do what on the bus: exactly who may on the socket, checked by the daemon itself so that a mistake
/// in the bus policy alone lets nobody in.
///
/// Reading (and `Refresh`, `LogImpression`, as on the socket) is for whoever may open the line socket: the
/// socket file's owner, its group when the mode lets the group write, everyone when it lets others write; root
/// and the daemon's own user always. The file is looked at on each call, so a change of its group or mode (an
/// administrator's `chgrp`, systemd's `SocketGroup=`) holds on the bus at once. The control calls are judged
/// by the flag service's policy, as on every surface (`CallPolicy`).
struct BusAccess: Sendable {
    /// The line socket's path; nil lets only root and the daemon's user read.
    let socketPath: String?
    /// Who may call what on every surface (`ControlGroups`, the state-write rate).
    let policy: CallPolicy

    func mayRead(_ peer: BusPeer) -> Bool {
        if policy.isPrivileged(peer.caller) { return true }
        var info = stat()
        guard let socketPath, stat(socketPath, &info) == 0 else { return false }
        let mode = UInt32(info.st_mode)
        if mode & 0o002 != 0 { return true }
        if peer.uid == info.st_uid { return mode & 0o200 != 0 }
        guard mode & 0o020 != 0 else { return false }
        return peer.gid == info.st_gid || peer.supplementaryGroups.contains(info.st_gid)
    }
}
