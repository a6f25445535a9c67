import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// A non-blocking inotify instance that hands out parsed events. A handle like a descriptor: `close()` ends it.
public struct InotifyDescriptor: Sendable {
    /// The inotify descriptor, for a dispatch source or epoll.
    public let descriptor: Int32

    /// What a watch reports (`IN_*` bits).
    public struct Events: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32

        public init(rawValue: UInt32) {
            self.rawValue = rawValue
        }

        /// A file opened for writing was closed (`IN_CLOSE_WRITE`).
        public static let closeWrite = Events(rawValue: UInt32(IN_CLOSE_WRITE))
        /// A file was renamed into the directory (`IN_MOVED_TO`).
        public static let movedTo = Events(rawValue: UInt32(IN_MOVED_TO))
        /// A file was renamed out of the directory (`IN_MOVED_FROM`).
        public static let movedFrom = Events(rawValue: UInt32(IN_MOVED_FROM))
        /// A file was deleted (`IN_DELETE`).
        public static let delete = Events(rawValue: UInt32(IN_DELETE))
        /// A file's metadata changed (`IN_ATTRIB`).
        public static let attributes = Events(rawValue: UInt32(IN_ATTRIB))
    }

    /// Creates a non-blocking, close-on-exec inotify instance.
    public init() throws(SystemError) {
        descriptor = try syscall("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
    }

    /// Watches `path` for `events`; returns the watch number events carry.
    @discardableResult
    public func watch(_ path: String, for events: Events) throws(SystemError) -> Int32 {
        try syscall("inotify_add_watch(\(path))") { inotify_add_watch(descriptor, path, events.rawValue) }
    }

    /// Reads every event queued now, without waiting.
    public func readEvents() -> [InotifyEvent] {
        // Room for many events at once; the kernel never splits one event across reads.
        var buffer = [UInt8](repeating: 0, count: 4096)
        var events: [InotifyEvent] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                (try? syscall("read") { read(descriptor, raw.baseAddress, raw.count) }) ?? -1
            }
            guard count > 0 else { return events }
            buffer.withUnsafeBytes { raw in
                events += InotifyEvent.parse(UnsafeRawBufferPointer(rebasing: raw[0..<count]))
            }
        }
    }

    /// Closes the instance, ending its watches.
    public func close() {
        _ = Glibc.close(descriptor)
    }
}
