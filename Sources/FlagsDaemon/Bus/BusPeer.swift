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

/// The callers the daemon has met, by unique connection name: the bus is asked who sent a call once per
/// connection, not once per call (a unique name is never reused while the bus runs, and its user never changes).
/// Bus thread only.
final class BusPeers {
    private var known: [String: BusPeer] = [:]
    /// More than this many names (connections come and go on a long-running bus): forget them all and ask again.
    private static let limit = 1024

    /// Who sent `call`; nil when the bus cannot say.
    func peer(of call: BusMessage) -> BusPeer? {
        guard let sender = call.sender else { return nil }
        if let peer = known[sender] { return peer }
        guard let uid = call.senderUID() else { return nil }
        if known.count >= Self.limit { known.removeAll(keepingCapacity: true) }
        let peer = BusPeer(uid: uid)
        known[sender] = peer
        return peer
    }
}
