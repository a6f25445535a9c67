import FlagsCore
import FlagsProtocol
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `[FeatureFlags] SeedFile=`: a device that boots with no usable flags of its own serves the seed its image
/// ships, until the first good fetch replaces it; a seed another user could plant, or of another application, is
/// refused with a log line.
@Suite(.hangLimit) struct SeedFileTests {
    static let seeded = Flag(
        key: "new_checkout", isEnabled: true, ruleId: "r_seed", properties: ["button_color": "blue"])

    /// Writes a seed of `flags` for `applicationCode` into `directory`, with `mode`; returns its path.
    static func writeSeed(
        _ flags: [Flag], applicationCode: String = "ABCDE-12345", mode: mode_t = 0o644, in directory: TemporaryDirectory
    ) throws -> String {
        let path = directory.file("seed.json")
        let seed = FlagSeed(applicationCode: applicationCode, exportedAt: "2026-12-01T12:00:00Z", flags: flags)
        try Data(seed.encoded()).write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, mode) == 0)
        return path
    }

    @Test("A device that boots offline serves the seed, says so everywhere, and the first fetch replaces it")
    func theSeedIsServedUntilTheFirstFetch() async throws {
        let server = try PushwooshRig.server()
        server.setDefaultReply(.status(503), for: "getFeatureFlags")
        let seeds = try TemporaryDirectory()
        defer { seeds.remove() }
        let path = try Self.writeSeed([Self.seeded], in: seeds)
        let daemon = try Fixtures.daemon(server, featureFlags: ["SeedFile": path])
        defer {
            server.stop()
            daemon.cleanUp()
        }
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let flag = try #require(try session.get("new_checkout"))
        #expect(flag["source"] == "seed")
        #expect(flag["ruleId"] == "r_seed")
        let status = try #require(try session.result("status"))
        #expect(status["seed"]?["serving"] == true)
        #expect(status["seed"]?["file"]?.stringValue == path)
        #expect(status["seed"]?["flags"] == 1)
        #expect(status["seed"]?["exportedAt"] == "2026-12-01T12:00:00Z")
        #expect(try session.result("explain", ["key": "new_checkout"])?["source"] == "seed")
        let metrics = try #require(try session.result("metrics")?["text"]?.stringValue)
        #expect(metrics.contains("pwflagsd_flags_from_seed 1"), "\(metrics)")
        #expect(daemon.log.contains("PWFLAGS_EVENT=seed-served"))

        // The first good fetch replaces it: Pushwoosh's flags, marked so, and the status says the seed is done.
        server.setDefaultReply(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        #expect(try session.call("refresh", timeout: .seconds(20))?["result"] != nil)
        let fetched = try #require(try session.get("new_checkout"))
        #expect(fetched["source"] == "pushwoosh")
        #expect(fetched["ruleId"] == .string(Fixtures.checkout.ruleId))
        #expect(try session.result("status")?["seed"]?["serving"] == false)
    }

    @Test("Fetched flags past CacheMaxAge offline give way to the seed again, and listeners are told (R15)")
    func theSeedComesBackAtCacheMaxAge() async throws {
        let seeds = try TemporaryDirectory()
        defer { seeds.remove() }
        let path = try Self.writeSeed([Self.seeded], in: seeds)
        let rig = try PushwooshRig.start(
            // Long enough that a loaded machine still sees the fetched flag before it expires.
            featureFlags: ["CacheMaxAge": "3s", "RetryBackoff": "200ms", "SeedFile": path]
        ) {
            $0.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        }
        defer { rig.stop() }
        let session = try SocketSession(socketPath: rig.daemon.socketPath)
        #expect(try await Eventually.wait { try session.get("new_checkout")?["source"] == "pushwoosh" })
        rig.server.stop()
        let listener = try SocketSession(socketPath: rig.daemon.socketPath)
        let listed = try listener.result("listen")?["flags"]?.arrayValue?.first { $0["key"] == "new_checkout" }
        // The change at CacheMaxAge puts the seed's flag back, as the seed says it (unless it came already).
        if listed?["source"] != "seed" {
            let change = try #require(listener.nextNotification(timeout: .seconds(5)))
            let changed = change["params"]?["changed"]?.arrayValue?.first
            #expect(changed?["source"] == "seed", "\(change)")
            #expect(changed?["ruleId"] == "r_seed")
        }
        #expect(try session.get("new_checkout")?["source"] == "seed")
        #expect(try session.result("status")?["seed"]?["serving"] == true)
    }

    @Test("A seed others may write, or of another application, is refused with a log line and never served")
    func anUntrustedOrForeignSeedIsRefused() async throws {
        for (mode, code, why) in [
            (mode_t(0o666), "ABCDE-12345", "writable by its group or others"),
            (mode_t(0o644), "ZZZZZ-99999", "holds the flags of application ZZZZZ-99999"),
        ] {
            let server = try PushwooshRig.server()
            server.setDefaultReply(.status(503), for: "getFeatureFlags")
            let seeds = try TemporaryDirectory()
            defer { seeds.remove() }
            let path = try Self.writeSeed([Self.seeded], applicationCode: code, mode: mode, in: seeds)
            let daemon = try Fixtures.daemon(server, featureFlags: ["SeedFile": path])
            defer {
                server.stop()
                daemon.cleanUp()
            }
            let session = try SocketSession(socketPath: daemon.socketPath)
            _ = try await server.waitForRequests(count: 1)
            #expect(try session.get("new_checkout") == .null)
            #expect(try session.result("status")?["seed"] == .null)
            #expect(daemon.log.contains(why), "\(daemon.log)")
            #expect(daemon.log.contains("PWFLAGS_EVENT=seed-refused"))
            let check = try Command.run(
                DaemonProcess.executable("pwflagsd"), ["--check-config", "--config", daemon.configPath], check: false)
            #expect(check.status == 1 && check.stderr.contains(why), "\(check)")
        }
    }

    @Test("pwflags export-seed on a golden device makes the seed another device serves as it was served")
    func exportSeedRoundTrips() async throws {
        let server = try PushwooshRig.server()
        server.setDefaultReply(.flags([Fixtures.checkout, Fixtures.banner]), for: "getFeatureFlags")
        let golden = try Fixtures.daemon(server)
        defer { golden.cleanUp() }
        let session = try SocketSession(socketPath: golden.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let exported = try Command.run(
            DaemonProcess.executable("pwflags"), ["--socket", golden.socketPath, "export-seed"], check: false)
        #expect(exported.status == 0, "\(exported)")
        let seed = try #require(try? FlagSeed.decode(Array(exported.stdout.utf8)).get(), "\(exported.stdout)")
        #expect(seed.applicationCode == "ABCDE-12345")
        #expect(seed.flags.map(\.key) == ["banner", "new_checkout"])

        let seeds = try TemporaryDirectory()
        defer { seeds.remove() }
        let path = try Self.writeSeed(seed.flags, in: seeds)
        server.setDefaultReply(.status(503), for: "getFeatureFlags")
        let device = try Fixtures.daemon(server, featureFlags: ["SeedFile": path])
        defer {
            server.stop()
            device.cleanUp()
        }
        let served = try SocketSession(socketPath: device.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: served))
        for key in ["new_checkout", "banner"] {
            var expected = try #require(try session.get(key))
            var actual = try #require(try served.get(key))
            expected = expected.removing("source")
            actual = actual.removing("source")
            #expect(actual == expected, "\(key)")
        }
    }
}

extension JSONValue {
    /// The object without `member`.
    fileprivate func removing(_ member: String) -> JSONValue {
        guard var object = objectValue else { return self }
        object[member] = nil
        return .object(object)
    }
}
