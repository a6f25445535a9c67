#if canImport(Glibc)
    public import Glibc
#endif

/// The Unix stream socket calls the daemon, the client library and the tests share.
public enum UnixSocket {
    /// Opens a blocking stream socket connected to `path`.
    public static func connect(to path: String) throws(SystemError) -> Int32 {
        let address = try UnixSocketAddress(path: path)
        let fd = try syscall("socket") {
            socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do {
            try syscall("connect(\(path))") { address.withSockaddr { Glibc.connect(fd, $0, $1) } }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Creates, binds and listens on a stream socket at `path` with permissions `mode`.
    ///
    /// The file is bound under a restrictive umask and then given `mode`, so that it is never reachable with
    /// looser permissions, not even for an instant.
    public static func listen(at path: String, mode: UInt32, backlog: Int32 = 512) throws(SystemError) -> Int32 {
        let address = try UnixSocketAddress(path: path)
        let fd = try syscall("socket") {
            socket(
                AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        }
        do {
            let previousMask = umask(0o177)
            defer { umask(previousMask) }
            try syscall("bind(\(path))") { address.withSockaddr { bind(fd, $0, $1) } }
            try syscall("chmod(\(path))") { chmod(path, mode_t(mode)) }
            try syscall("listen(\(path))") { Glibc.listen(fd, backlog) }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Accepts the next connection on a non-blocking listening socket: its descriptor, or nil when none waits.
    /// The new descriptor is blocking and inherits nothing else; `ECONNABORTED` (a client that left while
    /// waiting) and `EMFILE`/`ENFILE` (out of descriptors) come out as errors for the caller to tell apart.
    public static func accept(_ listenFD: Int32) throws(SystemError) -> Int32? {
        do {
            return try syscall("accept") { Glibc.accept(listenFD, nil, nil) }
        } catch  where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
            return nil
        }
    }

    /// What the state of a socket file tells about a previous daemon.
    public enum PathState: Sendable, Equatable {
        /// Nothing is there.
        case absent
        /// A socket file that nobody listens on: left by a crash, safe to replace.
        case stale
        /// A live daemon answers on it.
        case inUse
        /// Something that is not a socket; never deleted.
        case notASocket
    }

    /// Finds out whether `path` is free, a stale socket, a live one, or not a socket at all.
    public static func probe(_ path: String) -> PathState {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .absent }
        guard info.st_mode & S_IFMT == S_IFSOCK else { return .notASocket }
        guard let fd = try? connect(to: path) else { return .stale }
        close(fd)
        return .inUse
    }

    /// Puts a descriptor in non-blocking mode.
    public static func setNonBlocking(_ fd: Int32) throws(SystemError) {
        let flags = try syscall("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
        try syscall("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    /// The process, user and group of the peer at the time it connected (`SO_PEERCRED`).
    public static func peerCredentials(_ fd: Int32) throws(SystemError) -> PeerCredentials {
        // struct ucred is three 32-bit fields (pid, uid, gid); Glibc hides it behind _GNU_SOURCE.
        var raw: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: raw))
        try syscall("getsockopt(SO_PEERCRED)") { getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &raw, &length) }
        return PeerCredentials(pid: raw.0, uid: raw.1, gid: raw.2)
    }

    /// The peer's supplementary groups (`SO_PEERGROUPS`, Linux 4.13), or nil when the kernel cannot say.
    public static func peerGroups(_ fd: Int32) -> [gid_t]? {
        var groups = [gid_t](repeating: 0, count: 64)
        while true {
            var length = socklen_t(groups.count * MemoryLayout<gid_t>.size)
            let result = groups.withUnsafeMutableBytes { raw in
                getsockopt(fd, SOL_SOCKET, 59 /* SO_PEERGROUPS */, raw.baseAddress, &length)
            }
            if result == 0 { return Array(groups.prefix(Int(length) / MemoryLayout<gid_t>.size)) }
            guard errno == ERANGE, groups.count < 65536 else { return nil }
            groups = [gid_t](repeating: 0, count: max(groups.count * 2, Int(length) / MemoryLayout<gid_t>.size))
        }
    }

    /// Writes every byte, blocking as needed (`Descriptor.writeAll`).
    public static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) throws(SystemError) {
        try Descriptor.writeAll(fd, bytes)
    }

    /// Reads what is available (at most `capacity` bytes); an empty result means end of stream.
    public static func read(_ fd: Int32, capacity: Int = 65536) throws(SystemError) -> [UInt8] {
        try Descriptor.read(fd, capacity: capacity)
    }
}

/// Who is at the other end of a Unix socket.
public struct PeerCredentials: Sendable, Equatable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }
}
