import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A daemon running as root never writes through a directory link another user planted.
@Suite(.enabled(if: geteuid() == 0, "gives a link to another user: needs root"), .hangLimit)
struct PlantedLinkTests {
    @Test func aMetricsFileUnderAPlantedDirectoryLinkIsNotWrittenAndTheRefusalIsLogged() async throws {
        let directory = try TemporaryDirectory(prefix: "pwlnk")
        defer { directory.remove() }
        for name in ["shared", "secret"] {
            try FileManager.default.createDirectory(atPath: directory.file(name), withIntermediateDirectories: false)
        }
        #expect(chmod(directory.file("shared"), 0o1777) == 0)
        #expect(chmod(directory.file("secret"), 0o700) == 0)
        #expect(
            FileManager.default.createFile(
                atPath: directory.file("secret/pwflagsd.prom"), contents: Data("root's own\n".utf8)))
        #expect(chmod(directory.file("secret/pwflagsd.prom"), 0o600) == 0)
        // Another user's link in the sticky, world-writable directory.
        let link = directory.file("shared/mdir")
        #expect(symlink(directory.file("secret"), link) == 0)
        #expect(lchown(link, 65534, 65534) == 0)
        let daemon = try DaemonProcess.serving(
            Fixtures.all, extra: "[Daemon]\nMetricsFile=\(link)/pwflagsd.prom\nMetricsInterval=100ms\n")
        defer { daemon.cleanUp() }
        #expect(await Eventually.wait { daemon.log.contains("cannot write the metrics file") })
        #expect(daemon.log.contains("refuse symlink"), "\(daemon.log)")
        let text = try String(contentsOfFile: directory.file("secret/pwflagsd.prom"), encoding: .utf8)
        #expect(text == "root's own\n")
        var info = stat()
        #expect(stat(directory.file("secret/pwflagsd.prom"), &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file("secret")) == ["pwflagsd.prom"])
        #expect(try SocketSession(socketPath: daemon.socketPath).get("new_checkout")?["key"] == "new_checkout")
    }
}
