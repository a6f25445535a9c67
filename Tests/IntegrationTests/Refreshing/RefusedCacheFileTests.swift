import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A disk cache file refused for its shape is logged at notice with why, as a refused overrides file is.
@Suite(.hangLimit) struct RefusedCacheFileTests {
    @Test(
        "A FIFO, a link to /dev/zero, a directory or a file over 16 MiB as the cache: notice, with why",
        arguments: ["fifo", "zero", "directory", "large"])
    func refusedCacheIsLoggedWithWhy(shape: String) throws {
        let server = try PushwooshRig.server()
        server.setDefaultReply(.hang, for: "getFeatureFlags")
        let directory = try TemporaryDirectory()
        defer {
            server.stop()
            directory.remove()
        }
        let state = directory.file("state")
        try #require(mkdir(state, 0o700) == 0)
        let cache = state + "/flags-cache.json"
        switch shape {
        case "fifo": try #require(mkfifo(cache, 0o600) == 0)
        case "zero": try #require(symlink("/dev/zero", cache) == 0)
        case "directory": try #require(mkdir(cache, 0o700) == 0)
        default:
            try #require(creat(cache, 0o600) >= 0 && truncate(cache, 17 << 20) == 0)
        }
        let daemon = try Fixtures.daemon(server, directory: directory)
        defer { daemon.cleanUp() }
        let line = daemon.log.split(separator: "\n").first { $0.contains("ignored the disk cache") }
        #expect(line?.hasPrefix("notice:") == true, "log:\n\(daemon.log)")
        #expect(line?.contains("the cache file is refused") == true, "\(line ?? "-")")
    }
}
