import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// An epoll instance: descriptors registered with the events they wait for, and a wait that fills a reusable
/// buffer. A handle like a descriptor: copies share the instance, and `close()` ends it.
public struct Epoll: Sendable {
    /// The epoll descriptor.
    public let descriptor: Int32

    /// The events a descriptor waits for, or that a wait reports.
    public struct Events: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32

        public init(rawValue: UInt32) {
            self.rawValue = rawValue
        }

        // The kernel's values, spelled out so that callers need not import the C headers (a test holds them
        // equal to the headers').
        /// Readable (`EPOLLIN`).
        public static let input = Events(rawValue: 0x001)
        /// Writable (`EPOLLOUT`).
        public static let output = Events(rawValue: 0x004)
        /// An error on the descriptor (`EPOLLERR`, always reported).
        public static let error = Events(rawValue: 0x008)
        /// Both directions closed (`EPOLLHUP`, always reported).
        public static let hangup = Events(rawValue: 0x010)
        /// The peer shut down its writing side (`EPOLLRDHUP`).
        public static let readHangup = Events(rawValue: 0x2000)
    }

    /// One ready descriptor and what it is ready for.
    public struct Event: Sendable {
        public var descriptor: Int32
        public var events: Events
    }

    /// Room for the events one wait reports, allocated once and reused by every wait.
    public final class Buffer {
        fileprivate let storage: UnsafeMutablePointer<epoll_event>
        public let capacity: Int

        public init(capacity: Int) {
            self.capacity = capacity
            storage = .allocate(capacity: capacity)
            storage.initialize(repeating: epoll_event(), count: capacity)
        }

        deinit {
            storage.deallocate()
        }

        /// The `index`th event of the last wait.
        public subscript(index: Int) -> Event {
            let event = storage[index]
            return Event(descriptor: event.data.fd, events: Events(rawValue: event.events))
        }
    }

    /// Creates an epoll instance (close-on-exec).
    public init() throws(SystemError) {
        descriptor = try syscall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    }

    /// Starts watching `fd` for `events`.
    public func add(_ fd: Int32, events: Events) throws(SystemError) {
        try control(EPOLL_CTL_ADD, fd, events, "epoll_ctl(ADD)")
    }

    /// Changes the events `fd` is watched for; no events leaves it registered but silent.
    public func modify(_ fd: Int32, events: Events) throws(SystemError) {
        try control(EPOLL_CTL_MOD, fd, events, "epoll_ctl(MOD)")
    }

    /// Stops watching `fd`; a descriptor that is not watched is fine.
    public func remove(_ fd: Int32) {
        _ = epoll_ctl(descriptor, EPOLL_CTL_DEL, fd, nil)
    }

    private func control(_ operation: Int32, _ fd: Int32, _ events: Events, _ name: String) throws(SystemError) {
        var event = epoll_event()
        event.events = events.rawValue
        event.data.fd = fd
        try syscall(name) { epoll_ctl(descriptor, operation, fd, &event) }
    }

    /// Waits up to `timeout` milliseconds (-1: without end, 0: not at all) and returns how many events `buffer`
    /// now holds.
    ///
    /// A wait interrupted by a signal returns 0 rather than waiting again for the whole timeout: the caller's
    /// loop works out the time left to its deadlines.
    public func wait(into buffer: Buffer, timeout: Int32) throws(SystemError) -> Int {
        let count = epoll_wait(descriptor, buffer.storage, Int32(buffer.capacity), timeout)
        if count >= 0 { return Int(count) }
        let error = errno
        if error == EINTR { return 0 }
        throw SystemError("epoll_wait", errno: error)
    }

    /// Closes the instance.
    public func close() {
        _ = Glibc.close(descriptor)
    }
}
