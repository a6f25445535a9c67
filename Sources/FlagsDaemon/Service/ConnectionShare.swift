#if canImport(Glibc)
    import Glibc
#endif

/// Each peer user's share of a listener's connections, and the room kept for root and the daemon's own user.
///
/// Without it one member of the socket's group holding every slot with idle connections locked everyone out,
/// root's `pwflags reload` (the unit's `ExecReload`) included. Now a user other than root and the daemon's may
/// hold at most a quarter of the limit, and all such users together leave a sixteenth of it (at least one slot)
/// to root and the daemon's user, who may take any free slot. A connection whose peer is not known (TCP) is not
/// counted here; TCP clients prove themselves with the OFREP token instead.
///
/// The same rule bounds the bus's calls in flight per user (`BusLoop`). Owned by the event loop's thread.
struct ConnectionShare: SlotShare {
    /// The users with the whole table: root and the daemon's own.
    private let privileged: Set<UInt32>
    /// Open connections per unprivileged user.
    private var counts: [UInt32: Int] = [:]
    /// Open connections of unprivileged users, all together.
    private var unprivileged = 0

    init(daemonUser: UInt32 = geteuid()) {
        privileged = [0, daemonUser]
    }

    /// The most connections one unprivileged user may hold.
    static func perUser(of capacity: Int) -> Int { max(1, capacity / 4) }

    func perUser(of capacity: Int) -> Int { Self.perUser(of: capacity) }

    /// The slots only root and the daemon's user may take.
    static func reserved(of capacity: Int) -> Int { capacity >= 2 ? max(1, capacity / 16) : 0 }

    /// Whether a connection of `uid` may open now, `capacity` being the listener's limit.
    func admits(_ uid: UInt32, capacity: Int) -> Bool {
        if privileged.contains(uid) { return true }
        return counts[uid, default: 0] < Self.perUser(of: capacity)
            && unprivileged < capacity - Self.reserved(of: capacity)
    }

    mutating func opened(_ uid: UInt32?) {
        guard let uid, !privileged.contains(uid) else { return }
        counts[uid, default: 0] += 1
        unprivileged += 1
    }

    mutating func closed(_ uid: UInt32?) {
        guard let uid, !privileged.contains(uid), let count = counts[uid] else { return }
        counts[uid] = count > 1 ? count - 1 : nil
        unprivileged -= 1
    }
}
