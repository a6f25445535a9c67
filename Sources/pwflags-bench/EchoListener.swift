import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The listening socket both in-process echo floors share: a fresh socket file at `path`, closed and removed by
/// `stop()`.
struct EchoListener: Sendable {
    let path: String
    let descriptor: Int32

    init(path: String) throws {
        self.path = path
        unlink(path)
        descriptor = try UnixSocket.listen(at: path, mode: 0o600)
    }

    /// Wakes a thread blocked in `accept` or `epoll_wait`, then closes and removes the socket.
    func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
        unlink(path)
    }
}
