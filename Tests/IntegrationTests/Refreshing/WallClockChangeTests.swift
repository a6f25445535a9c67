import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// CLOCK_REALTIME moved under a running daemon, as NTP or `date -s` would: through an LD_PRELOAD shim
/// (`Tests/ClockShim/wall-clock-shift.c`, compiled here) that shifts the daemon's wall clock and reports the change
/// through its cancel-on-set timerfd, as the kernel does. The machine's clock stays as it is.
@Suite(.hangLimit) struct WallClockChangeTests {
    /// Sets the daemon's wall-clock shift, in place (the shim maps the file).
    static func shift(_ file: String, by seconds: Int64) throws {
        let fd = open(file, O_WRONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        var value = seconds
        try #require(pwrite(fd, &value, 8, 0) == 8)
    }

    static func nextRefresh(_ session: SocketSession) throws -> Date? {
        try session.result("status")?["nextRefreshAt"]?.stringValue.flatMap { ISO8601DateFormatter().date(from: $0) }
    }

    @Test(
        "The wall clock moved a month ahead, then a year back: logged, cache re-stamped, hourly refresh kept",
        .disabled(if: Sanitizer.isActive, "an LD_PRELOAD shim under a sanitizer's interceptors; run without one"))
    func wallClockChangesUnderARunningDaemon() async throws {
        let directory = try TemporaryDirectory()
        let shim = try PreloadShim.build("ClockShim/wall-clock-shift.c", in: directory)
        let shiftFile = directory.file("wall-clock-shift")
        _ = FileManager.default.createFile(atPath: shiftFile, contents: Data(count: 8))
        let rig = try PushwooshRig.start(
            daemon: {
                let config = PushwooshConfig.text(
                    serverURL: $0.baseURL.absoluteString, applicationCode: "ABCDE-12345",
                    featureFlags: ["DisableThrottle": "yes"])
                return try DaemonProcess(
                    config: config, directory: directory,
                    environment: ["LD_PRELOAD": shim, "PWFLAGS_WALL_CLOCK_SHIFT_FILE": shiftFile])
            },
            replies: { $0.setDefaultReply(.flags([Fixtures.checkout]), for: "getFeatureFlags") })
        defer { rig.stop() }
        let (server, daemon) = (rig.server, rig.daemon)
        let session = try SocketSession(socketPath: daemon.socketPath)
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        #expect(await Eventually.wait { (try? CacheFile.read(Fixtures.cachePath(daemon)))??.fetchedAt != nil })
        let fetchedAt = try #require(try CacheFile.read(Fixtures.cachePath(daemon))).fetchedAt
        let requests = server.requests.count
        let pid = daemon.process.processIdentifier

        var total: Int64 = 0
        for jump: Int64 in [30 * 86400, -365 * 86400] {
            total += jump
            try Self.shift(shiftFile, by: total)
            let logged = await Eventually.wait { daemon.log.contains("the wall clock changed by \(jump) s") }
            #expect(logged, "no clock change logged for \(jump) s; log:\n\(daemon.log)")
            // The cache's wall fetch time, made again from its boot-clock time by the moved clock.
            let restamped = await Eventually.wait {
                guard let cache = try? CacheFile.read(Fixtures.cachePath(daemon)) else { return false }
                return abs(cache.fetchedAt - (fetchedAt + Double(total))) < 60
            }
            #expect(restamped, "jump \(jump): cache fetchedAt not re-stamped to \(fetchedAt + Double(total))")
            // Refreshing goes on hourly: the sleeps are still armed on the boot clock, and the next refresh, as
            // the moved wall clock reads it, is still about an hour away.
            let timers = DaemonTimerClockTests.timers(of: pid)
            #expect(
                timers.contains { $0.clockID == DaemonTimerClockTests.boottime && $0.isArmed },
                "jump \(jump): \(timers)")
            let next = try #require(try Self.nextRefresh(session), "jump \(jump): no nextRefreshAt")
            let movedNow = Date().addingTimeInterval(Double(total))
            #expect(
                (3000...3700).contains(next.timeIntervalSince(movedNow)),
                "jump \(jump): next refresh \(next), moved clock \(movedNow)")
            // The change fetched nothing by itself: refreshes keep to their schedule.
            #expect(server.requests.count == requests, "jump \(jump): \(server.requests.map(\.path))")
        }
        // A refresh after the changes is stamped by the moved clock.
        #expect(try session.call("refresh")?["result"] != nil)
        let refreshed = try #require(try CacheFile.read(Fixtures.cachePath(daemon)))
        #expect(abs(refreshed.fetchedAt - (Date().timeIntervalSince1970 + Double(total))) < 60)
        #expect(try session.get("new_checkout")?["ruleId"] == "r_1a2b3c4d")
    }
}
