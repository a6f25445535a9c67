/// One inotify event as the kernel reports it, parsed out of `struct inotify_event`.
public struct InotifyEvent: Sendable, Equatable {
    /// The watch it belongs to.
    public var watch: Int32
    /// What happened (`IN_*` bits).
    public var mask: UInt32
    /// Pairs the two halves of a rename.
    public var cookie: UInt32
    /// The name inside the watched directory; empty for an event about the directory itself.
    public var name: String

    public init(watch: Int32, mask: UInt32, cookie: UInt32, name: String) {
        self.watch = watch
        self.mask = mask
        self.cookie = cookie
        self.name = name
    }

    /// The size of `struct inotify_event` without its name.
    static let headerSize = 16

    /// Parses the events a `read` returned; a truncated event at the end is ignored.
    ///
    /// The layout: wd (4 bytes), mask (4), cookie (4), len (4), then `len` bytes of name padded with zeros.
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> [InotifyEvent] {
        var events: [InotifyEvent] = []
        var offset = 0
        while offset + headerSize <= bytes.count {
            let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let cookie = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let start = offset + headerSize
            let nameBytes = bytes[start..<min(bytes.count, start + length)].prefix { $0 != 0 }
            events.append(
                InotifyEvent(
                    watch: watch, mask: mask, cookie: cookie, name: String(decoding: nameBytes, as: UTF8.self)))
            offset = start + length
        }
        return events
    }
}
