import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A state directory that cannot take the cache (full, read-only): flags are served from memory, and the log and
/// `status.cacheError` say so until a write succeeds again.
@Suite(.enabled(if: TmpfsMount.isAvailable, "needs root to mount a tmpfs"), .hangLimit)
struct StateDirectoryFaultTests {
    /// A flag whose JSON is about `bytes` long.
    static func big(bytes: Int) -> Flag {
        Flag(
            key: "big", isEnabled: true, ruleId: "r_big",
            properties: ["blob": .string(String(repeating: "b", count: bytes))])
    }

    /// Runs `body` with a daemon whose state directory is a tmpfs of `size`, after its first fetch stored
    /// `new_checkout`; unmounts and removes everything afterwards, even when the test fails.
    func withDaemonOnTmpfs(
        size: String,
        _ body: (FakePushwooshServer, DaemonProcess, TmpfsMount, SocketSession) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        let mount = try TmpfsMount(at: directory.file("state"), size: size)
        let server = try PushwooshRig.server()
        var daemon: DaemonProcess?
        defer {
            daemon?.stop()
            server.stop()
            mount.unmount()
            directory.remove()
        }
        server.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        let started = try Fixtures.daemon(server, featureFlags: ["DisableThrottle": "yes"], directory: directory)
        daemon = started
        let session = try SocketSession(socketPath: started.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(await Eventually.wait { Fixtures.cacheText(started)?.contains("new_checkout") == true })
        try await body(server, started, mount, session)
    }

    /// Checks that a refresh succeeds, serves `key` from memory, leaves the old cache, and reports `reason`.
    func expectServedFromMemory(
        _ key: String, reason: String, server: FakePushwooshServer, daemon: DaemonProcess, session: SocketSession
    ) throws {
        let answer = try #require(try session.call("refresh"))
        #expect(answer["result"]?["fromNetwork"]?.boolValue == true, "\(answer)")
        #expect(try session.get(key)?.isNull == false)
        #expect(try session.get("new_checkout")?.isNull == true)
        let status = try #require(try session.result("status"))
        #expect(status["cacheError"]?["reason"]?.stringValue?.contains(reason) == true, "\(status)")
        #expect(status["cacheError"]?["at"]?.stringValue != nil)
        #expect(status["problem"] == .null)
        #expect(status["lastError"] == .null)
        let line = daemon.log.split(separator: "\n").first { $0.contains("cannot write the disk cache") }
        #expect(line?.contains(reason) == true, "log: \(daemon.log)")
        print(
            "state directory fault: status.cacheError \(status["cacheError"]?.serialized() ?? "-"); log: \(line ?? "-")"
        )
        // The previous cache is intact, and no temporary file is left.
        #expect(Fixtures.cacheText(daemon)?.contains("new_checkout") == true)
        let names = try FileManager.default.contentsOfDirectory(atPath: daemon.directory.file("state"))
        #expect(!names.contains { $0.contains(".tmp.") }, "\(names)")
    }

    /// A refresh that can be stored again clears `status.cacheError`.
    func expectRecovered(server: FakePushwooshServer, daemon: DaemonProcess, session: SocketSession) throws {
        server.setDefaultReply(.flags([Fixtures.search]), for: "getFeatureFlags")
        #expect(try session.result("refresh")?["fromNetwork"]?.boolValue == true)
        #expect(try session.result("status")?["cacheError"] == .null)
        #expect(Fixtures.cacheText(daemon)?.contains("search_v2") == true)
    }

    @Test("A full disk: the response is served from memory, the old cache stays, log and status.cacheError say why")
    func fullDisk() async throws {
        try await withDaemonOnTmpfs(size: "64k") { server, daemon, _, session in
            server.setDefaultReply(.flags([Self.big(bytes: 200 * 1024)]), for: "getFeatureFlags")
            try expectServedFromMemory(
                "big", reason: "No space left on device", server: server, daemon: daemon, session: session)
            try expectRecovered(server: server, daemon: daemon, session: session)
        }
    }

    @Test("A read-only state directory: flags are served from memory, log and status.cacheError say why")
    func readOnlyStateDirectory() async throws {
        try await withDaemonOnTmpfs(size: "1m") { server, daemon, mount, session in
            try mount.remountReadOnly()
            server.setDefaultReply(.flags([Fixtures.banner]), for: "getFeatureFlags")
            try expectServedFromMemory(
                "banner", reason: "Read-only file system", server: server, daemon: daemon, session: session)
            try mount.remountReadWrite()
            try expectRecovered(server: server, daemon: daemon, session: session)
        }
    }

    /// Sets `bob` and waits until the disk cache holds bob's flags.
    func becomeBob(_ server: FakePushwooshServer, _ daemon: DaemonProcess, _ session: SocketSession) async throws {
        server.setDefaultReply(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        #expect(try session.result("setUserId", ["userId": "bob"])?["userId"] == "bob")
        #expect(await Eventually.wait { (try? CacheFile.read(Fixtures.cachePath(daemon)))??.userId == "bob" })
    }

    @Test("R8d: on a full disk a user change still holds after a restart, and status.cacheError says why")
    func fullDiskUserChange() async throws {
        try await withDaemonOnTmpfs(size: "64k") { server, daemon, _, session in
            try await becomeBob(server, daemon, session)
            // Fill the disk: the new user id cannot be written, but a file can still be removed.
            try Command.run(
                "/bin/sh", ["-c", "cat /dev/zero > \(daemon.directory.file("state/filler"))"], check: false)
            #expect(try session.result("setUserId", ["userId": "carol"])?["userId"] == "carol")
            let status = try #require(try session.result("status"))
            #expect(
                status["cacheError"]?["reason"]?.stringValue?.contains("cannot keep the user id") == true, "\(status)")
            #expect(daemon.stop() == 0)
            // A restart without network: bob must not come back, nor his flags.
            server.setDefaultReply(.hang, for: "getFeatureFlags")
            let restarted = try Fixtures.daemon(
                server, featureFlags: ["DisableThrottle": "yes"], directory: daemon.directory)
            defer { restarted.stop() }
            let again = try SocketSession(socketPath: restarted.socketPath)
            let after = try #require(try again.result("status"))
            #expect(after["userId"] != "bob", "bob came back after a restart: \(after)")
            #expect(try again.get("new_checkout")?.isNull == true)
        }
    }

    @Test("R8d: a read-only state directory refuses a user change a restart would undo, and status says why")
    func readOnlyUserChange() async throws {
        try await withDaemonOnTmpfs(size: "1m") { server, daemon, mount, session in
            try await becomeBob(server, daemon, session)
            try mount.remountReadOnly()
            defer { try? mount.remountReadWrite() }
            let answer = try #require(try session.call("setUserId", ["userId": "carol"]))
            #expect(answer["error"]?["message"]?.stringValue?.contains("the user stays bob") == true, "\(answer)")
            let status = try #require(try session.result("status"))
            #expect(status["userId"] == "bob", "\(status)")
            #expect(
                status["cacheError"]?["reason"]?.stringValue?.contains("cannot change the user") == true, "\(status)")
        }
    }
}
