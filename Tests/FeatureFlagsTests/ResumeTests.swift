import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport
import Testing
import UnixIO

@testable import FeatureFlags

#if canImport(Glibc)
    import Glibc
#endif

/// The mirror resumes its change stream: on reconnect it sends the epoch and revision it holds, and an
/// "unchanged" answer keeps its flags without telling anyone.
@Suite(.hangLimit) struct ResumeTests {
    init() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Counts its calls.
    /// A library instance on `daemon`, started and holding its first snapshot, with a counting listener on a
    /// queue of its own.
    static func mirror(of daemon: FakeDaemon, label: String) async -> (FeatureFlags, CountingListener, DispatchQueue) {
        let flags = FeatureFlags(socketPath: daemon.path, timing: ClientTiming.fast)
        flags.start()
        #expect(await Eventually.wait(timeout: .seconds(10)) { flags.hasSnapshot })
        let listener = CountingListener()
        let queue = DispatchQueue(label: label)
        flags.addUpdateListener(listener, queue: queue)
        return (flags, listener, queue)
    }

    final class CountingListener: FeatureFlagsUpdateListener {
        let calls = Locked(0)
        func featureFlagsDidUpdate() { calls.withLock { $0 += 1 } }
    }

    static let flag: JSONValue = ["key": "v", "enabled": true, "ruleId": "r1", "properties": [:]]

    @Test(
        "After the connection drops the mirror listens since its epoch and revision; unchanged keeps the flags quietly")
    func reconnectResumesWithSince() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try FakeDaemon(path: directory.file("d.sock")) { method, id in
            let result: JSONValue
            switch method {
            case "listen":
                // The first listen has no since and gets the flags; later ones are told nothing changed.
                result = [
                    "subscription": "s1", "expiresAt": .null, "epoch": "e1", "revision": 3, "flags": [Self.flag],
                ]
            default: result = [:]
            }
            return [JSONValue.object(["jsonrpc": "2.0", "id": id, "result": result]).serialized()]
        }
        defer { daemon.stop() }
        let (flags, listener, queue) = await Self.mirror(of: daemon, label: "test.resume")
        defer { flags.stop() }

        daemon.dropConnections()
        #expect(await Eventually.wait(timeout: .seconds(10)) { daemon.params.count >= 2 })
        #expect(daemon.params.first?["since"] == nil)
        #expect(daemon.params[1]["since"] == ["epoch": "e1", "revision": 3])
        #expect(await Eventually.wait(timeout: .seconds(10)) { flags.isConnected })
        #expect(flags.get("v")?.ruleId == "r1")
        queue.sync {}
        #expect(listener.calls.withLock { $0 } == 0)
    }

    @Test("An unchanged answer keeps the mirror's flags and tells no listener")
    func unchangedAnswerKeepsTheFlags() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let listens = Locked(0)
        let daemon = try FakeDaemon(path: directory.file("d.sock")) { method, id in
            let first =
                method == "listen"
                && listens.withLock { count in
                    count += 1
                    return count == 1
                }
            let result: JSONValue =
                switch method {
                case "listen" where first:
                    ["subscription": "s1", "expiresAt": .null, "epoch": "e1", "revision": 3, "flags": [Self.flag]]
                case "listen":
                    ["subscription": "s2", "expiresAt": .null, "epoch": "e1", "revision": 3, "unchanged": true]
                default: [:]
                }
            return [JSONValue.object(["jsonrpc": "2.0", "id": id, "result": result]).serialized()]
        }
        defer { daemon.stop() }
        let (flags, listener, queue) = await Self.mirror(of: daemon, label: "test.unchanged")
        defer { flags.stop() }

        daemon.dropConnections()
        #expect(await Eventually.wait(timeout: .seconds(10)) { daemon.methods.filter { $0 == "listen" }.count >= 2 })
        #expect(await Eventually.wait(timeout: .seconds(10)) { flags.isConnected })
        // Still connected a moment later: the unchanged answer was taken, not treated as a broken reply.
        #expect(
            await !Eventually.wait(timeout: .milliseconds(300)) { daemon.methods.filter { $0 == "listen" }.count > 2 })
        #expect(flags.get("v")?.ruleId == "r1")
        queue.sync {}
        #expect(listener.calls.withLock { $0 } == 0)
    }
}

/// Reconnects within milliseconds.
enum ClientTiming {
    static let fast = MirrorTiming(initialBackoff: .milliseconds(20), maximumBackoff: .milliseconds(200))
}
