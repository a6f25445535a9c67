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

extension SystemGroup {
    /// The group `name`, created if the machine lacks it and then left in place: the bus policy the package
    /// installs names the fixed group `pwflags`, and tests in other processes may use it at the same time.
    public static func ensure(_ name: String) throws -> String {
        if getgrnam(name) == nil {
            let outcome = try Command.run("/usr/sbin/groupadd", ["--system", name], check: false)
            // Another test process may have made it in between.
            guard outcome.status == 0 || getgrnam(name) != nil else {
                throw Command.Failure(description: "groupadd \(name): \(outcome)")
            }
        }
        return name
    }
}
