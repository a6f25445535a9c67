import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small tmpfs mounted on a directory, for tests that need a full or a read-only file system (root only).
///
/// `chmod` does not stop root, so a read-only state directory must be a read-only mount. Call `unmount()` in a
/// `defer`, so that a failing test never leaves a mount behind.
public final class TmpfsMount: Sendable {
    /// The mount point.
    public let path: String

    /// Whether this process may mount (root): tests that need a mount are skipped otherwise.
    public static var isAvailable: Bool { getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/bin/mount") }

    /// Creates `path` when missing and mounts a tmpfs of `size` (`mount -o size=`, such as `64k`) on it.
    public init(at path: String, size: String) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", path])
    }

    /// Makes the file system read-only; files stay readable.
    public func remountReadOnly() throws {
        try Self.run("/bin/mount", ["-o", "remount,ro", path])
    }

    /// Makes the file system writable again.
    public func remountReadWrite() throws {
        try Self.run("/bin/mount", ["-o", "remount,rw", path])
    }

    /// Unmounts, lazily so that a process still holding a file open cannot keep the mount alive.
    public func unmount() {
        try? Self.run("/bin/umount", ["-l", path])
    }

    /// Runs a command and throws when it fails.
    private static func run(_ executable: String, _ arguments: [String]) throws {
        let outcome = try Command.run(executable, arguments, check: false)
        guard outcome.status == 0 else {
            throw TmpfsMountError(command: ([executable] + arguments).joined(separator: " "))
        }
    }
}

/// A mount command that failed.
public struct TmpfsMountError: Error, CustomStringConvertible {
    /// The command line.
    public var command: String

    public var description: String { "failed: \(command)" }
}
