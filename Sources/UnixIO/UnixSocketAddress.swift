#if canImport(Glibc)
    public import Glibc
#endif

/// A `sockaddr_un` for a filesystem path, checked once against the 108-byte `sun_path` limit.
public struct UnixSocketAddress: Sendable, Equatable {
    public let path: String

    /// The longest path `sun_path` holds with its terminating zero.
    public static let maximumPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    public init(path: String) throws(SystemError) {
        guard !path.isEmpty, path.utf8.count <= Self.maximumPathLength else {
            throw SystemError("socket path '\(path)'", errno: ENAMETOOLONG)
        }
        self.path = path
    }

    /// Lends the address to a socket call as a `sockaddr` pointer and its length.
    public func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.utf8.count + 1)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
