import Foundation
import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// inotify: the raw `struct inotify_event` records parsed, and a real instance reporting a write.
@Suite(.hangLimit) struct InotifyTests {
    /// One raw record: wd, mask, cookie, len, then the name padded with zeros to `padded` bytes.
    static func record(watch: Int32, mask: UInt32, cookie: UInt32, name: String, padded: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        withUnsafeBytes(of: watch) { bytes += $0 }
        withUnsafeBytes(of: mask) { bytes += $0 }
        withUnsafeBytes(of: cookie) { bytes += $0 }
        withUnsafeBytes(of: UInt32(padded)) { bytes += $0 }
        bytes += Array(name.utf8) + [UInt8](repeating: 0, count: padded - name.utf8.count)
        return bytes
    }

    @Test("Records are parsed with their zero padding dropped, one without a name included, a cut-off one ignored")
    func parsesRecords() {
        let bytes =
            Self.record(watch: 1, mask: 0x8, cookie: 0, name: "flags.json", padded: 16)
            + Self.record(watch: 1, mask: 0x4, cookie: 0, name: "", padded: 0)
            + Self.record(watch: 2, mask: 0x80, cookie: 9, name: "a", padded: 4)
            + [1, 0, 0, 0, 8, 0]
        let events = bytes.withUnsafeBytes { InotifyEvent.parse($0) }
        #expect(
            events == [
                InotifyEvent(watch: 1, mask: 0x8, cookie: 0, name: "flags.json"),
                InotifyEvent(watch: 1, mask: 0x4, cookie: 0, name: ""),
                InotifyEvent(watch: 2, mask: 0x80, cookie: 9, name: "a"),
            ])
    }

    @Test("A name longer than the bytes read is cut at the end of the buffer, not read past it")
    func truncatedNameStaysInBounds() {
        let bytes = Array(Self.record(watch: 1, mask: 0x8, cookie: 0, name: "abcdefgh", padded: 16).prefix(20))
        let events = bytes.withUnsafeBytes { InotifyEvent.parse($0) }
        #expect(events == [InotifyEvent(watch: 1, mask: 0x8, cookie: 0, name: "abcd")])
    }

    @Test("A file written in a watched directory comes out as a close-after-write event with its name")
    func reportsAWrite() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let inotify = try InotifyDescriptor()
        defer { inotify.close() }
        let watch = try inotify.watch(directory.path, for: [.closeWrite, .movedTo])
        #expect(inotify.readEvents().isEmpty)
        try Data("x".utf8).write(to: URL(fileURLWithPath: directory.file("flags.json")))
        let events = inotify.readEvents()
        #expect(
            events.contains {
                $0.name == "flags.json" && $0.watch == watch
                    && $0.mask & InotifyDescriptor.Events.closeWrite.rawValue != 0
            }, "\(events)")
    }

    @Test("Watching a directory that does not exist throws an error naming the path")
    func watchingNothingFails() throws {
        let inotify = try InotifyDescriptor()
        defer { inotify.close() }
        #expect(throws: SystemError("inotify_add_watch(/nonexistent/pwf)", errno: ENOENT)) {
            try inotify.watch("/nonexistent/pwf", for: .closeWrite)
        }
    }
}
