import FlagsCore
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Who may call the control methods (`ControlGroups`) and `reload` (root and the daemon's own user).
struct AccessPolicy: Sendable, Equatable {
    /// The groups whose members may call control methods; nil lets every peer that can connect.
    var controlGroups: Set<UInt32>?
    /// The daemon's own user.
    var ownUID: UInt32

    init(controlGroups: Set<UInt32>?, ownUID: UInt32? = nil) {
        self.controlGroups = controlGroups
        self.ownUID = ownUID ?? getuid()
    }

    /// True for root and the daemon's own user, who may do anything.
    func isPrivileged(_ peer: PeerCredentials) -> Bool {
        peer.uid == 0 || peer.uid == ownUID
    }

    /// Whether `peer` may call `setUserId`, `setAppState` and `pushRegistered`.
    ///
    /// `SO_PEERCRED` carries only the primary group, so the supplementary ones come from `SO_PEERGROUPS`.
    func mayControl(_ peer: PeerCredentials, supplementaryGroups: () -> [UInt32]?) -> Bool {
        guard let controlGroups else { return true }
        if isPrivileged(peer) || controlGroups.contains(peer.gid) { return true }
        return supplementaryGroups()?.contains(where: controlGroups.contains) ?? false
    }

    /// The policy of a configuration; group names that do not exist are logged and left out.
    static func make(for configuration: FlagsCore.Configuration, logger: Logger) -> AccessPolicy {
        guard !configuration.controlGroups.isEmpty else { return AccessPolicy(controlGroups: nil) }
        let (groups, unknown) = resolveGroups(configuration.controlGroups)
        if !unknown.isEmpty {
            logger.warning("ControlGroups names groups that do not exist", ["GROUPS": unknown.joined(separator: " ")])
        }
        return AccessPolicy(controlGroups: groups)
    }

    /// Resolves group names to ids; returns the names that do not exist.
    static func resolveGroups(_ names: [String]) -> (gids: Set<UInt32>, unknown: [String]) {
        var gids: Set<UInt32> = []
        var unknown: [String] = []
        for name in names {
            if let entry = getgrnam(name) {
                gids.insert(entry.pointee.gr_gid)
            } else if let number = UInt32(name) {
                gids.insert(number)
            } else {
                unknown.append(name)
            }
        }
        return (gids, unknown)
    }
}
