#if canImport(Glibc)
    import Glibc
#endif

/// The TCP calls of the OFREP listener: a numeric IPv4 or IPv6 address, bound and listened on, and what an
/// accepted or inherited socket is.
public enum InetSocket {
    /// Creates, binds and listens on a non-blocking, close-on-exec TCP socket at the numeric `host` (such as
    /// `127.0.0.1` or `::1`) and `port` (0: one the kernel picks).
    public static func listen(host: String, port: UInt16, backlog: Int32 = 128) throws(SystemError) -> Int32 {
        let isV6 = host.contains(":")
        let family = isV6 ? AF_INET6 : AF_INET
        let fd = try syscall("socket") {
            socket(
                family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        }
        do throws(SystemError) {
            var reuse: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
            if isV6 {
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                address.sin6_port = port.bigEndian
                try bind(fd, to: &address, host: host) { inet_pton(AF_INET6, host, &$0.sin6_addr) }
            } else {
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = port.bigEndian
                try bind(fd, to: &address, host: host) { inet_pton(AF_INET, host, &$0.sin_addr) }
            }
            try syscall("listen") { Glibc.listen(fd, backlog) }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Opens a blocking TCP connection to the numeric IPv4 `host` and `port` (clients: the bench, the tests).
    /// `receiveBuffer` sets `SO_RCVBUF` before connecting, so that the window offered is that small from the start
    /// (the tests' stalled readers).
    public static func connect(host: String, port: UInt16, receiveBuffer: Int32? = nil) throws(SystemError) -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw SystemError("inet_pton(\(host))", errno: EINVAL)
        }
        let fd = try syscall("socket") {
            socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        if var size = receiveBuffer {
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        do throws(SystemError) {
            try syscall("connect(\(host):\(port))") {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
        } catch {
            close(fd)
            throw error
        }
        setNoDelay(fd)
        return fd
    }

    /// Binds `fd` to `address` (a `sockaddr_in` or `sockaddr_in6`).
    /// Binds `fd` to `address` once `parse` has written `host` into it (`inet_pton`, which returns 1).
    private static func bind<Address>(
        _ fd: Int32, to address: inout Address, host: String, parse: (inout Address) -> Int32
    ) throws(SystemError) {
        guard parse(&address) == 1 else {
            throw SystemError("inet_pton(\(host))", errno: EINVAL)
        }
        try syscall("bind(\(host))") {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(fd, $0, socklen_t(MemoryLayout<Address>.size))
                }
            }
        }
    }

    /// The address family of a socket (`AF_UNIX`, `AF_INET`, `AF_INET6`), or nil when `fd` is not a socket.
    public static func family(_ fd: Int32) -> Int32? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        return Int32(storage.ss_family)
    }

    /// The local port of a TCP socket, or nil.
    public static func localPort(_ fd: Int32) -> UInt16? {
        address(of: fd, peer: false)?.port
    }

    /// The numeric address a TCP socket is bound to, such as `127.0.0.1` or `::1`, or nil.
    public static func localHost(_ fd: Int32) -> String? {
        address(of: fd, peer: false)?.host
    }

    /// The numeric address of a TCP socket's peer, such as `127.0.0.1`, or nil.
    public static func peerHost(_ fd: Int32) -> String? {
        address(of: fd, peer: true)?.host
    }

    private static func address(of fd: Int32, peer: Bool) -> (host: String, port: UInt16)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length)
            }
        }
        guard result == 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                    var raw = inet.pointee.sin_addr
                    inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                    return (Self.string(text), UInt16(bigEndian: inet.pointee.sin_port))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet in
                    var raw = inet.pointee.sin6_addr
                    inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                    return (Self.string(text), UInt16(bigEndian: inet.pointee.sin6_port))
                }
            }
        default:
            return nil
        }
    }

    private static func string(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Sends small answers at once instead of holding them for Nagle's algorithm.
    public static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }
}
