import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// F1 with real daemons: a fleet started together does not stay a herd.
@Suite(.hangLimit) struct FleetSpreadTests {
    static let daemons = 16
    /// Short, so that three intervals pass in seconds; the spread is as wide as the interval (the default caps it).
    static let interval = 3.0

    /// CLOCK_BOOTTIME in seconds: the clock the daemons' slots are laid on.
    static func bootNow() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_BOOTTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    @Test(
        "16 daemons started at once: by the third interval their requests span at least half of it, each at its phase")
    func sixteenDaemonsSpreadOut() async throws {
        let server = try PushwooshRig.server()
        var daemons: [DaemonProcess] = []
        defer {
            for daemon in daemons { daemon.cleanUp() }
            server.stop()
        }
        let interval = Self.interval
        // Started together, without waiting for one before the next; no cache, so each asks at once (F2).
        for index in 0..<Self.daemons {
            let config = PushwooshConfig.text(
                serverURL: server.baseURL.absoluteString, pushwoosh: ["HWID": "fleet-device-\(index)"],
                featureFlags: ["RefreshInterval": "3s", "RefreshSpread": "1h", "SessionStartDelay": "1h"])
            daemons.append(try DaemonProcess(config: config, waitForReady: false))
        }
        for daemon in daemons { #expect(daemon.notify.waitFor("READY=1") != nil) }
        // The session start's request, then one an interval: the third of each is in the third interval.
        // Waits for every device's third, not for a total: a daemon that was quick to start may already have sent
        // its fourth while a slow one is still at its second.
        let everyDeviceHasThree = await Eventually.wait(timeout: .seconds(Int(4 * interval) + 20)) {
            var counts: [String: Int] = [:]
            for (request, _) in server.timedRequests where request.apiMethod == "getFeatureFlags" {
                if let hwid = request.requestObject?["hwid"]?.stringValue { counts[hwid, default: 0] += 1 }
            }
            return counts.count == Self.daemons && counts.values.allSatisfy { $0 >= 3 }
        }
        try #require(everyDeviceHasThree, "not every daemon sent three requests")
        let offset = Self.bootNow() - ContinuousClock.now.timeIntervalSinceStart
        var byDevice: [String: [Double]] = [:]
        for (request, at) in server.timedRequests where request.apiMethod == "getFeatureFlags" {
            guard let hwid = request.requestObject?["hwid"]?.stringValue else { continue }
            byDevice[hwid, default: []].append(at.timeIntervalSinceStart + offset)
        }
        #expect(byDevice.count == Self.daemons)
        let firsts = byDevice.values.compactMap(\.first)
        let thirds = byDevice.values.filter { $0.count >= 3 }.map { $0[2] }
        try #require(thirds.count == Self.daemons)
        let startSpan = (firsts.max() ?? 0) - (firsts.min() ?? 0)
        let thirdSpan = (thirds.max() ?? 0) - (thirds.min() ?? 0)
        print("16 daemons: first requests within \(startSpan) s, third within \(thirdSpan) s of \(interval) s")
        #expect(thirdSpan >= interval / 2, "the third requests span \(thirdSpan) s")
        // Each daemon's third request lands at its phase on the boot clock, give or take a loaded machine.
        for (hwid, times) in byDevice where times.count >= 3 {
            let expected = RefreshPolicy.phase(forDevice: hwid) * interval
            let actual = times[2].truncatingRemainder(dividingBy: interval)
            let distance = abs(actual - expected)
            #expect(
                min(distance, interval - distance) < 0.6, "\(hwid): at \(actual) s of the interval, phase \(expected) s"
            )
            // One request an interval after the first interval: no extra request, no skipped slot.
            #expect(abs(times[2] - times[1] - interval) < 0.6, "\(hwid): \(times)")
        }
    }
}

extension ContinuousClock.Instant {
    /// Seconds since an arbitrary fixed start, to compare instants with another clock's readings.
    fileprivate var timeIntervalSinceStart: Double {
        let components = (self - ContinuousClock.Instant.origin).components
        return Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    fileprivate static let origin = ContinuousClock.now
}
