import Foundation
import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Bounded whole-file reads.
@Suite(.hangLimit) struct FileReadingTests {
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

    @Test("A FIFO whose writer stays silent fails with ETIMEDOUT after fifoWait, instead of hanging")
    func fifoNeverBlocks() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("fifo")
        try #require(mkfifo(path, 0o600) == 0)
        // The test holds the FIFO open for writing and writes nothing: a blocking read would wait for ever.
        let writer = open(path, O_RDWR | O_CLOEXEC)
        try #require(writer >= 0)
        defer { close(writer) }
        let returned = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            #expect(throws: SystemError("read(\(path))", errno: ETIMEDOUT)) {
                try FileReading.contents(ofPath: path, limit: 100, fifoWait: .milliseconds(200))
            }
            returned.signal()
        }
        // On failure the reader is still waiting; closing the writer (defer) lets it go.
        #expect(returned.wait(timeout: .now() + 5) == .success, "the read of a silent FIFO did not return")
    }

    @Test("A FIFO is read until its writer closes it, even when the writer comes after the reader")
    func fifoReadsWhatItsWriterWrites() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("fifo")
        try #require(mkfifo(path, 0o600) == 0)
        Thread.detachNewThread {
            // Blocks until the reader has opened the FIFO.
            let writer = open(path, O_WRONLY | O_CLOEXEC)
            guard writer >= 0 else { return }
            try? Descriptor.writeAll(writer, Array("{\"flags\":[]}".utf8))
            close(writer)
        }
        let bytes = try FileReading.contents(ofPath: path, limit: 100, fifoWait: .seconds(10))
        #expect(String(decoding: bytes, as: UTF8.self) == "{\"flags\":[]}")
    }
}
