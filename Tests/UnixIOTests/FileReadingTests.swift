import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Bounded whole-file reads.
@Suite struct FileReadingTests {
    @Test("A file of exactly the limit is read whole; one byte more is refused with EFBIG")
    func limit() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("at", String(repeating: "a", count: 100))
        try directory.write("over", String(repeating: "a", count: 101))
        #expect(try FileReading.contents(ofPath: directory.file("at"), limit: 100).count == 100)
        #expect(throws: SystemError("read(\(directory.file("over")))", errno: EFBIG)) {
            try FileReading.contents(ofPath: directory.file("over"), limit: 100)
        }
    }

    @Test("An endless file (/dev/zero) stops at the limit instead of being read forever")
    func endlessFile() {
        #expect(throws: SystemError("read(/dev/zero)", errno: EFBIG)) {
            try FileReading.contents(ofPath: "/dev/zero", limit: 1 << 20)
        }
    }

    @Test("A missing file throws ENOENT naming the path; a directory throws EISDIR")
    func unreadable() {
        #expect(throws: SystemError("open(/nonexistent/pwf)", errno: ENOENT)) {
            try FileReading.contents(ofPath: "/nonexistent/pwf", limit: 10)
        }
        #expect(throws: SystemError("read(/tmp)", errno: EISDIR)) {
            try FileReading.contents(ofPath: "/tmp", limit: 10)
        }
    }
}
