import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// A non-blocking eventfd used as a doorbell: any thread rings it, the thread that waits on it in epoll drains it.
public struct EventFD: Sendable {
    /// The eventfd descriptor, for epoll.
    public let descriptor: Int32

    /// Creates a non-blocking, close-on-exec eventfd with its counter at zero.
    public init() throws(SystemError) {
        descriptor = try syscall("eventfd") { eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC)) }
    }

    /// Adds one to the counter, which makes the descriptor readable. Never blocks: a counter at its maximum
    /// already means "rung".
    public func ring() {
        var one: UInt64 = 1
        _ = write(descriptor, &one, 8)
    }

    /// Resets the counter to zero, so that the descriptor is no longer readable.
    public func drain() {
        var counter: UInt64 = 0
        _ = read(descriptor, &counter, 8)
    }

    /// Closes the descriptor.
    public func close() {
        _ = Glibc.close(descriptor)
    }
}
