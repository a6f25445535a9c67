import FlagsDaemon
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The state directory's atomic writes and what a crash in the middle of one leaves.
@Suite struct StateDirectoryTests {
    @Test("Temporary files of writers that are gone are removed; a live writer's, and every other file, stay")
    func removesStaleTemporaries() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let state = StateDirectory(path: directory.path)
        // pid_max is at most 4194304 on Linux: no process has these ids.
        let deadA = ".flags-cache.json.tmp.2147483000"
        let deadB = ".user-id.tmp.2147483001"
        let live = ".flags-cache.json.tmp.\(getpid())"
        let kept = ["flags-cache.json", "user-id", live, ".hidden", ".x.tmp.notapid"]
        for name in kept + [deadA, deadB] {
            #expect(FileManager.default.createFile(atPath: directory.file(name), contents: Data("x".utf8)))
        }
        #expect(state.removeStaleTemporaries() == [deadA, deadB])
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
}
