import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The disk cache's age across restarts on the real daemon (R7, R15): by the boot clock in the same
/// boot, by the wall clock after a reboot, provisional when the wall clock reads earlier than the fetch. The
/// machine's clocks are never changed: the cache file is rewritten as a daemon in each situation would have left
/// it. The tests' configuration has CacheMaxAge=1h.
@Suite(.hangLimit) struct DiskCacheClockTests {
    /// This boot's id as libsystemd gives it: 32 hex digits.
    static var bootID: String {
        let text = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)) ?? ""
        return text.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "-", with: "")
    }

    /// CLOCK_BOOTTIME in seconds.
    static var bootNow: Double {
        var spec = timespec()
        clock_gettime(CLOCK_BOOTTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Runs a first daemon until its cache is on disk, then rewrites the cache's clock fields with `fields`.
    static func cache(_ server: FakePushwooshServer, fields: [String: JSONValue]) async throws -> TemporaryDirectory {
        server.enqueue(.flags([Fixtures.checkout]), for: "getFeatureFlags")
        let first = try Fixtures.daemon(server)
        let session = try SocketSession(socketPath: first.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(await Eventually.wait { Fixtures.cacheText(first)?.contains("new_checkout") == true })
        first.stop()
        let path = Fixtures.cachePath(first)
        let data = try #require(FileManager.default.contents(atPath: path))
        guard case .object(var members) = try JSONValue(parsing: [UInt8](data)) else {
            Issue.record("the cache is not an object")
            return first.directory
        }
        #expect(members["format"]?.integerValue == 2)
        #expect(members["bootId"]?.stringValue == bootID)
        for (key, value) in fields { members[key] = value }
        try Data(JSONValue.object(members).serialized().utf8).write(to: URL(fileURLWithPath: path))
        return first.directory
    }

    /// Starts a daemon on `directory` whose own request never answers, and reads what it serves.
    static func restart(_ server: FakePushwooshServer, _ directory: TemporaryDirectory) throws -> (
        DaemonProcess, SocketSession
    ) {
        server.setDefaultReply(.hang, for: "getFeatureFlags")
        let daemon = try Fixtures.daemon(server, directory: directory)
        return (daemon, try SocketSession(socketPath: daemon.socketPath))
    }

    /// `status.fetchedAt` as Unix seconds.
    static func fetchedAt(_ session: SocketSession) throws -> Double? {
        guard let text = try session.result("status")?["fetchedAt"]?.stringValue else { return nil }
        return try Date(text, strategy: .iso8601).timeIntervalSince1970
    }

    @Test("Same boot, wall clock set back 2 h since the fetch: the cache is served, aged by the boot clock")
    func sameBootWallSetBack() async throws {
        let server = try PushwooshRig.server()
        let now = Date().timeIntervalSince1970
        // Fetched a minute ago by the boot clock; the wall clock has since been set back 2 h.
        let directory = try await Self.cache(
            server, fields: ["fetchedAt": .number(now + 2 * 3600 - 60), "bootTime": .number(Self.bootNow - 60)])
        let (daemon, session) = try Self.restart(server, directory)
        defer {
            daemon.cleanUp()
            server.stop()
        }
        #expect(try session.get("new_checkout")?.isNull == false, "log: \(daemon.log)")
        let shown = try #require(try Self.fetchedAt(session))
        #expect(abs(shown - (now - 60)) < 5, "status.fetchedAt \(shown), expected about \(now - 60)")
    }

    @Test("Same boot, fetched more than CacheMaxAge ago by the boot clock: not served, whatever the wall time says")
    func sameBootTooOldByTheBootClock() async throws {
        let server = try PushwooshRig.server()
        let now = Date().timeIntervalSince1970
        let directory = try await Self.cache(
            server, fields: ["fetchedAt": .number(now - 60), "bootTime": .number(Self.bootNow - 3600 - 60)])
        let (daemon, session) = try Self.restart(server, directory)
        defer {
            daemon.cleanUp()
            server.stop()
        }
        #expect(try session.get("new_checkout")?.isNull == true)
        #expect(daemon.log.contains("past CacheMaxAge"))
    }

    @Test("Another boot: the cache is aged by the wall clock")
    func otherBootUsesTheWallClock() async throws {
        let server = try PushwooshRig.server()
        let now = Date().timeIntervalSince1970
        let young = try await Self.cache(
            server, fields: ["bootId": "0123456789abcdef0123456789abcdef", "fetchedAt": .number(now - 600)])
        let (first, session) = try Self.restart(server, young)
        #expect(try session.get("new_checkout")?.isNull == false, "log: \(first.log)")
        first.cleanUp()
        let old = try await Self.cache(
            server, fields: ["bootId": "0123456789abcdef0123456789abcdef", "fetchedAt": .number(now - 3600 - 60)])
        let (second, again) = try Self.restart(server, old)
        defer {
            second.cleanUp()
            server.stop()
        }
        #expect(try again.get("new_checkout")?.isNull == true)
    }

    @Test("Another boot with the wall clock earlier than the fetch: served provisionally, and the log says why")
    func otherBootWallEarlierIsProvisional() async throws {
        let server = try PushwooshRig.server()
        let now = Date().timeIntervalSince1970
        let directory = try await Self.cache(
            server, fields: ["bootId": "0123456789abcdef0123456789abcdef", "fetchedAt": .number(now + 86400 * 365)])
        let (daemon, session) = try Self.restart(server, directory)
        defer {
            daemon.cleanUp()
            server.stop()
        }
        #expect(try session.get("new_checkout")?.isNull == false)
        #expect(daemon.log.contains("cache-age-unknown") || daemon.log.contains("judged again"))
        // Its age counts from the start: status shows it fetched about now, expiring CacheMaxAge from now.
        let shown = try #require(try Self.fetchedAt(session))
        #expect(abs(shown - now) < 5)
    }
}
