import Foundation
import TestSupport
import Testing

@testable import FlagsDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The state directory's atomic writes and what a crash in the middle of one leaves.
@Suite(.hangLimit) struct StateDirectoryTests {
    @Test("Temporary files of writers that are gone are removed; a live writer's, and every other file, stay")
    func removesStaleTemporaries() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        // pid_max is at most 4194304 on Linux: no process has these ids.
        let deadA = ".flags-cache.json.tmp.2147483000"
        let deadB = ".user-id.tmp.2147483001"
        // The name a write takes when the first one is taken.
        let deadC = ".user-id.2.tmp.2147483002"
        let live = ".flags-cache.json.tmp.\(getpid())"
        let kept = ["flags-cache.json", "user-id", live, ".hidden", ".x.tmp.notapid"]
        for name in kept + [deadA, deadB, deadC] {
            #expect(FileManager.default.createFile(atPath: directory.file(name), contents: Data("x".utf8)))
        }
        #expect(state.removeStaleTemporaries() == [deadA, deadB, deadC].sorted())
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(left == kept.sorted())
        #expect(state.removeStaleTemporaries().isEmpty)
    }

    @Test("A write leaves no temporary file behind")
    func writeLeavesNoTemporary() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        try state.writeAtomically("user-id", Array("alice".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["user-id"])
        #expect(state.read("user-id") == Array("alice".utf8))
    }

    @Test("A symlink planted at the temporary file's name is not followed: its target stays untouched")
    func plantedSymlinkIsNotFollowed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        let victim = directory.file("victim")
        try "precious".write(toFile: victim, atomically: false, encoding: .utf8)
        let dangling = directory.file("created-through-the-link")
        // The name the first write would use, and the name a second writer of the same file would use.
        try FileManager.default.createSymbolicLink(
            atPath: directory.file(".user-id.tmp.\(getpid())"), withDestinationPath: victim)
        try FileManager.default.createSymbolicLink(
            atPath: directory.file(".cache.tmp.\(getpid())"), withDestinationPath: dangling)

        try state.writeAtomically("user-id", Array("alice".utf8))
        try state.writeAtomically("cache", Array("flags".utf8))

        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect(!FileManager.default.fileExists(atPath: dangling))
        #expect(state.read("user-id") == Array("alice".utf8))
        #expect(state.read("cache") == Array("flags".utf8))
        // The written files are regular files, not the planted links renamed into place.
        for name in ["user-id", "cache"] {
            let type =
                try FileManager.default.attributesOfItem(atPath: directory.file(name))[.type] as? FileAttributeType
            #expect(type == .typeRegular)
        }
    }

    @Test("A temporary file left with this process's id does not block the next write")
    func leftoverTemporaryWithOwnPidDoesNotBlock() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        #expect(FileManager.default.createFile(atPath: directory.file(".user-id.tmp.\(getpid())"), contents: Data()))
        try state.writeAtomically("user-id", Array("bob".utf8))
        #expect(state.read("user-id") == Array("bob".utf8))
    }
}
