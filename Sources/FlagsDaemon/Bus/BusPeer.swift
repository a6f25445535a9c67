#if canImport(Glibc)
    import Glibc
#endif

/// A caller on the bus: the user the bus vouches for, and that user's groups in the user database.
///
/// The bus tells the daemon a sender's user (from `SO_PEERCRED`) but not its process's groups, so the groups
/// come from the user database (`getgrouplist`), as dbus-daemon's own policy (`<policy group=…>`) decides.
struct BusPeer: Sendable, Equatable {
    var uid: UInt32
    var gid: UInt32
    var supplementaryGroups: [UInt32]

    init(uid: UInt32, gid: UInt32, supplementaryGroups: [UInt32]) {
        self.uid = uid
        self.gid = gid
        self.supplementaryGroups = supplementaryGroups
    }

    /// `uid` with its primary group and groups from the user database; a user the database does not know has
    /// no group at all.
    init(uid: UInt32) {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else {
            self.init(uid: uid, gid: UInt32.max, supplementaryGroups: [])
            return
        }
        let primary = entry.pointee.pw_gid
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(name, primary, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            _ = getgrouplist(name, primary, &groups, &count)
        }
        self.init(uid: uid, gid: primary, supplementaryGroups: Array(groups.prefix(Int(max(0, count)))))
    }
}
