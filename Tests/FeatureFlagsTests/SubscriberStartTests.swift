import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport
import Testing

@testable import FeatureFlags

#if canImport(Glibc)
    import Glibc
#endif

/// The subscription thread starts on the instance's first use (or `start()`), never in `init`.
@Suite(.hangLimit) struct SubscriberStartTests {
    init() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// A daemon that answers `listen` with one flag.
    static func daemon(in directory: TemporaryDirectory) throws -> FakeDaemon {
        try FakeDaemon(path: directory.file("d.sock")) { method, id in
            let result: JSONValue =
                method == "listen"
                ? [
                    "subscription": "s1", "expiresAt": .null, "revision": 1,
                    "flags": [["key": "v", "enabled": true, "ruleId": "r1", "properties": [:]]],
                ] : [:]
            return [JSONValue.object(["jsonrpc": "2.0", "id": id, "result": result]).serialized()]
        }
    }

    @Test("An instance that is never used opens no connection, and its stop() returns at once")
    func unusedInstanceStaysIdle() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try Self.daemon(in: directory)
        defer { daemon.stop() }
        let idle = FeatureFlags(socketPath: daemon.path, timing: .standard)
        let used = FeatureFlags(socketPath: daemon.path, timing: .standard)
        defer { used.stop() }
        // The first use: a read, which answers the default before the first snapshot.
        _ = used.isEnabled("v", default: false)
        #expect(await Eventually.wait(timeout: .seconds(10)) { used.hasSnapshot })
        // The idle one, made first, would have subscribed by now had its init started the thread.
        #expect(await !Eventually.wait(timeout: .milliseconds(300)) { daemon.methods.count > 1 })
        let began = ContinuousClock.now
        idle.stop()
        #expect(ContinuousClock.now - began < .seconds(1))
        #expect(daemon.methods == ["listen"])
    }

    @Test("start() begins mirroring before the first read")
    func startBeginsMirroring() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try Self.daemon(in: directory)
        defer { daemon.stop() }
        let flags = FeatureFlags(socketPath: daemon.path, timing: .standard)
        defer { flags.stop() }
        flags.start()
        #expect(await Eventually.wait(timeout: .seconds(10)) { daemon.methods == ["listen"] })
        #expect(await Eventually.wait(timeout: .seconds(10)) { flags.get("v")?.ruleId == "r1" })
    }
}
