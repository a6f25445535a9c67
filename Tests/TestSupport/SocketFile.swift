import Foundation
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Socket files on disk, as a crashed daemon leaves them and as `SocketMode` sets them.
public enum SocketFile {
    /// Creates a socket file at `path` that nobody listens on: bound, then closed, as after a crash.
    public static func createStale(at path: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket", errno: errno) }
        defer { close(fd) }
        let address = try UnixSocketAddress(path: path)
        try syscall("bind(\(path))") { address.withSockaddr { bind(fd, $0, $1) } }
    }

    /// The permission bits of `path`, or nil when it does not exist.
    public static func permissions(of path: String) -> UInt32? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return UInt32(info.st_mode) & 0o777
    }

    /// True when `path` exists and is a socket.
    public static func isSocket(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        return info.st_mode & S_IFMT == S_IFSOCK
    }
}
