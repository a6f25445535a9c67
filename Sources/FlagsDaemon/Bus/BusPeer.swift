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

    /// The caller, as the flag service's policy judges it.
    var caller: Caller {
        let groups = supplementaryGroups
        return Caller(surface: .bus, uid: uid, gid: gid) { groups }
    }
}

/// The callers the daemon has met, by unique connection name, and the calls of those it has not met yet while
/// the bus is asked who they are. Bus thread only.
///
/// The bus is asked once per connection, not once per call (a unique name is never reused while the bus runs,
/// and its user never changes), and never waited for: a new sender's calls are held here until the bus's
/// answer comes back through the loop. What is held is bounded, per sender and in all, so that a member that
/// connects, calls and hangs up in a loop holds a bounded share of the daemon's memory; past the bound, calls are
/// refused at once. A sender that hung up before the answer came has nobody to answer: its calls are dropped, and
/// so are those of its that were still on their way.
///
/// A user's groups are read from the user database once a second at most, however many connections the user
/// makes: a member connecting in a loop would otherwise have the daemon read `/etc/group` for each connection.
final class BusPeers {
    /// What becomes of a call.
    enum Admission {
        /// Its sender is known: answer it now.
        case known(BusPeer)
        /// Its sender is new: ask the bus who it is (`asking`); the call is held until then.
        case ask
        /// Held behind the question already asked about its sender.
        case held
        /// Too many calls are held: refuse it.
        case refused
        /// Its sender hung up: nobody waits for an answer.
        case gone
    }

    /// More than this many names (connections come and go on a long-running bus): forget them all and ask again.
    static let knownLimit = 1024
    /// The most calls held for one sender, and for all of them together.
    static let heldPerSender = 16
    static let heldInAll = 1024

    private var known: [String: BusPeer] = [:]
    /// Senders the bus said are gone (never reused while the bus runs); forgotten all at once past `knownLimit`.
    private var gone: Set<String> = []
    /// Each user as last read from the user database, and when (`MonotonicClock.seconds`).
    private var users: [UInt32: (peer: BusPeer, readAt: Double)] = [:]
    /// The calls held for each sender the bus is being asked about.
    private var held: [String: [BusMessage]] = [:]
    private var heldCount = 0
    /// The questions asked: the sender, by the serial of the call that asked.
    private var asked: [UInt64: String] = [:]

    /// Takes a call of `sender`'s.
    func admit(_ call: BusMessage, from sender: String) -> Admission {
        if let peer = known[sender] { return .known(peer) }
        if gone.contains(sender) { return .gone }
        guard heldCount < Self.heldInAll else { return .refused }
        if let calls = held[sender] {
            guard calls.count < Self.heldPerSender else { return .refused }
            held[sender]?.append(call)
            heldCount += 1
            return .held
        }
        held[sender] = [call]
        heldCount += 1
        return .ask
    }

    /// The bus is being asked about `sender`, by the call of serial `serial`.
    func asking(about sender: String, serial: UInt64) {
        asked[serial] = sender
    }

    /// The calls held for `sender`, given up (the question could not be asked).
    func release(_ sender: String) -> [BusMessage] {
        let calls = held.removeValue(forKey: sender) ?? []
        heldCount -= calls.count
        return calls
    }

    /// The bus's answer to the question of serial `serial`: `uid`, or nil when it could not say. Returns who
    /// the caller is (nil when unknown) and its calls held; nil for an answer to no question of this table's.
    func answered(serial: UInt64, uid: UInt32?, now: Double) -> (peer: BusPeer?, calls: [BusMessage])? {
        guard let sender = asked.removeValue(forKey: serial) else { return nil }
        let calls = release(sender)
        guard let uid else { return (nil, calls) }
        if known.count >= Self.knownLimit { known.removeAll(keepingCapacity: true) }
        let peer = user(uid, now: now)
        known[sender] = peer
        return (peer, calls)
    }

    /// The question of serial `serial` was about a sender that is gone: its calls held are dropped.
    func hungUp(serial: UInt64) {
        guard let sender = asked.removeValue(forKey: serial) else { return }
        _ = release(sender)
        if gone.count >= Self.knownLimit { gone.removeAll(keepingCapacity: true) }
        gone.insert(sender)
    }

    /// `uid` with its groups, read again when the last reading is a second old.
    private func user(_ uid: UInt32, now: Double) -> BusPeer {
        if let cached = users[uid], now - cached.readAt < 1 { return cached.peer }
        if users.count >= Self.knownLimit { users.removeAll(keepingCapacity: true) }
        let peer = BusPeer(uid: uid)
        users[uid] = (peer, now)
        return peer
    }

    /// The connection to the bus is gone, and every name with it.
    func forgetAll() {
        known.removeAll()
        gone.removeAll()
        held.removeAll()
        asked.removeAll()
        heldCount = 0
    }
}
