import Foundation
import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Atomic writes: the temporary file is never opened through a planted link, and nothing is left after a failure.
@Suite(.hangLimit) struct AtomicFileTests {
    @Test("The file gets the new content, mode 0600, and no temporary file is left")
    func writesAndCleansUp() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try AtomicFile.write(Array("old".utf8), to: "cache", in: directory.path)
        try AtomicFile.write(Array("new".utf8), to: "cache", in: directory.path)
        #expect(FileManager.default.contents(atPath: directory.file("cache")) == Data("new".utf8))
        var info = stat()
        #expect(stat(directory.file("cache"), &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["cache"])
    }

    @Test("A symlink planted at the temporary name is not followed: its target stays as it was")
    func refusesPlantedSymlink() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("victim", "precious")
        let planted = directory.file(".cache.tmp.\(getpid())")
        #expect(symlink(directory.file("victim"), planted) == 0)
        try AtomicFile.write(Array("new".utf8), to: "cache", in: directory.path)
        #expect(FileManager.default.contents(atPath: directory.file("victim")) == Data("precious".utf8))
        #expect(FileManager.default.contents(atPath: directory.file("cache")) == Data("new".utf8))
        // The link is left alone, and the write went through the next name.
        var info = stat()
        #expect(lstat(planted, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
    }

    @Test("A write into a missing directory throws an error naming the first missing component")
    func failsInMissingDirectory() {
        #expect {
            try AtomicFile.write([1], to: "cache", in: "/nonexistent/pwf")
        } throws: { error in
            guard let error = error as? SystemError else { return false }
            return error.errno == ENOENT && error.call == "open /nonexistent"
        }
    }

    @Test("Only temporary files of a writer that is gone count as stale")
    func staleTemporaries() {
        // Above the kernel's largest pid: no such process can exist.
        #expect(AtomicFile.isStaleTemporary(".cache.tmp.2147483646"))
        #expect(AtomicFile.isStaleTemporary(".cache.3.tmp.2147483646"))
        #expect(!AtomicFile.isStaleTemporary(".cache.tmp.\(getpid())"))
        #expect(!AtomicFile.isStaleTemporary(".cache.tmp.1"))
        #expect(!AtomicFile.isStaleTemporary("cache.tmp.2147483646"))
        #expect(!AtomicFile.isStaleTemporary(".cache.tmp.x"))
        #expect(!AtomicFile.isStaleTemporary(".cache"))
    }
}
