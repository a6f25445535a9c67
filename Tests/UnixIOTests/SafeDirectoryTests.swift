import Foundation
import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The directory of a file the daemon writes is opened without following a link another user could plant.
@Suite(.hangLimit) struct SafeDirectoryTests {
    /// `shared` is world-writable and sticky (as /tmp), `secret` only root's, `public` an ordinary directory.
    static func layout() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        for name in ["shared", "secret", "public"] {
            try FileManager.default.createDirectory(atPath: directory.file(name), withIntermediateDirectories: false)
        }
        #expect(chmod(directory.file("shared"), 0o1777) == 0)
        #expect(chmod(directory.file("secret"), 0o700) == 0)
        #expect(
            FileManager.default.createFile(atPath: directory.file("secret/target"), contents: Data("precious".utf8)))
        return directory
    }

    @Test(
        "A link in a shared directory owned by another user is refused; the file it leads to stays",
        .enabled(if: geteuid() == 0, "gives a link to another user: needs root"))
    func refusesALinkAnotherUserOwns() throws {
        let directory = try Self.layout()
        defer { directory.remove() }
        let link = directory.file("shared/mdir")
        #expect(symlink(directory.file("secret"), link) == 0)
        #expect(lchown(link, 65534, 65534) == 0)
        #expect(throws: SystemError.self) {
            try AtomicFile.write(Array("metrics".utf8), to: "target", in: link, mode: 0o644)
        }
        #expect(FileManager.default.contents(atPath: directory.file("secret/target")) == Data("precious".utf8))
        #expect(throws: SystemError.self) { try AtomicFile.remove("target", in: link) }
        #expect(FileManager.default.fileExists(atPath: directory.file("secret/target")))
        // Also as a middle component, and as a relative link.
        #expect(unlink(link) == 0)
        #expect(symlink("..", link) == 0)
        #expect(lchown(link, 65534, 65534) == 0)
        #expect(throws: SystemError.self) {
            try AtomicFile.write(Array("metrics".utf8), to: "target", in: link + "/secret")
        }
    }

    @Test("Links owned by the daemon's user in directories only it writes are followed, absolute and relative")
    func followsItsOwnLinks() throws {
        let directory = try Self.layout()
        defer { directory.remove() }
        #expect(symlink(directory.file("public"), directory.file("absolute")) == 0)
        #expect(symlink("public", directory.file("relative")) == 0)
        #expect(symlink("../relative", directory.file("public/up")) == 0)
        try AtomicFile.write(Array("a".utf8), to: "one", in: directory.file("absolute"))
        try AtomicFile.write(Array("b".utf8), to: "two", in: directory.file("relative"))
        try AtomicFile.write(Array("c".utf8), to: "three", in: directory.file("public/up/."))
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.file("public")).sorted()
        #expect(names == ["one", "three", "two", "up"])
        try AtomicFile.remove("one", in: directory.file("absolute"))
        #expect(!FileManager.default.fileExists(atPath: directory.file("public/one")))
    }

    @Test("A loop of links ends with an error, not a hang")
    func aLoopOfLinksIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(symlink("b", directory.file("a")) == 0)
        #expect(symlink("a", directory.file("b")) == 0)
        #expect(throws: SystemError.self) { try AtomicFile.write([], to: "x", in: directory.file("a")) }
    }

    @Test("Missing directories are made on the way, the last with its mode, but never through another user's link")
    func createsMissingDirectories() throws {
        let directory = try Self.layout()
        defer { directory.remove() }
        close(try SafeDirectory.open(directory.file("public/a/b/state"), creatingMode: 0o700))
        var info = stat()
        #expect(stat(directory.file("public/a/b/state"), &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        guard geteuid() == 0 else { return }
        let link = directory.file("shared/mdir")
        #expect(symlink(directory.file("secret"), link) == 0)
        #expect(lchown(link, 65534, 65534) == 0)
        #expect(throws: SystemError.self) { try SafeDirectory.open(link + "/state", creatingMode: 0o700) }
        #expect(!FileManager.default.fileExists(atPath: directory.file("secret/state")))
    }
}
