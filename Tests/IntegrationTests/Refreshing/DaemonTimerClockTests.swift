import Foundation
import TestSupport
import Testing

/// The running daemon's timers, as the kernel sees them: intervals are measured on the boot clock.
@Suite(.hangLimit) struct DaemonTimerClockTests {
    /// A timerfd of a process, as `/proc/PID/fdinfo` describes it.
    struct Timer: CustomStringConvertible {
        /// The clock id (`CLOCK_REALTIME` 0, `CLOCK_MONOTONIC` 1, `CLOCK_BOOTTIME` 7).
        var clockID: Int
        /// Time until it fires; zero when disarmed.
        var left: Duration

        var isArmed: Bool { left > .zero }
        var description: String { "clockid \(clockID), \(left) left" }
    }

    static let realtime = 0
    static let monotonic = 1
    static let boottime = 7

    /// The timerfds `pid` holds, read from `/proc/PID/fd` (the links) and `/proc/PID/fdinfo` (`clockid:` and
    /// `it_value: (seconds, nanoseconds)`).
    static func timers(of pid: Int32) -> [Timer] {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return descriptors.compactMap { fd -> Timer? in
            let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")
            guard link == "anon_inode:[timerfd]",
                let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8)
            else { return nil }
            var timer = Timer(clockID: -1, left: .zero)
            for line in info.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2 else { continue }
                if parts[0] == "clockid" { timer.clockID = Int(parts[1]) ?? -1 }
                if parts[0] == "it_value" {
                    let numbers = parts[1].split { !$0.isNumber }.compactMap { Int64($0) }
                    if numbers.count == 2 { timer.left = .seconds(numbers[0]) + .nanoseconds(numbers[1]) }
                }
            }
            return timer
        }
    }

    @Test("The running daemon's timed sleeps are armed on a timerfd on CLOCK_BOOTTIME, which counts through suspend")
    func sleepsAreOnTheBootClock() async throws {
        let rig = try PushwooshRig.start()
        defer { rig.stop() }
        let session = try rig.session()
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        let pid = rig.daemon.process.processIdentifier
        // After the first fetch the refresher sleeps until its next deadline (it wakes at least once a minute
        // to look at them): libdispatch arms every sleep of `ContinuousClock` on one timerfd of that clock.
        let armed = await Eventually.wait {
            Self.timers(of: pid).contains { $0.clockID == Self.boottime && $0.isArmed }
        }
        let timers = Self.timers(of: pid)
        #expect(armed, "no CLOCK_BOOTTIME timer armed: \(timers)")
        #expect(timers.allSatisfy { [Self.realtime, Self.monotonic, Self.boottime].contains($0.clockID) }, "\(timers)")
        // The one CLOCK_REALTIME timer is the wall-clock watch, armed years ahead (ClockChangeWatcher.horizon).
        #expect(timers.filter { $0.clockID == Self.realtime }.allSatisfy { $0.left > .seconds(300 * 86400) })
        // And the next refresh is the hourly one.
        let next = try #require(try session.result("status")?["nextRefreshAt"]?.stringValue)
        let at = try #require(ISO8601DateFormatter().date(from: next))
        #expect((3000...3700).contains(at.timeIntervalSinceNow), "next refresh at \(next)")
    }
}
