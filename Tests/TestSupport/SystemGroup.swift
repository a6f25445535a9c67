import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A group created for one test with `groupadd` and deleted with `groupdel` (the test must run as root).
public final class SystemGroup: Sendable {
    public let name: String

    /// Creates a group named `prefix` and a random suffix (names stay under the 32-character limit).
    public init(prefix: String) throws {
        name = prefix + String(UInt32.random(in: 0..<0xFFFF_FFFF), radix: 36)
        try Command.run("/usr/sbin/groupadd", [name])
    }

    /// The group's id.
    public var gid: UInt32? {
        getgrnam(name).map { $0.pointee.gr_gid }
    }

    public func remove() {
        _ = try? Command.run("/usr/sbin/groupdel", [name])
    }
}
