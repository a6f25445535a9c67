import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The running daemon watches for wall-clock changes without polling (a `timerfd` cancelled on a clock change). No test
/// sets the machine's clock, so this checks the watch itself as the kernel shows it.
@Suite(.hangLimit) struct ClockWatchTests {
    @Test("From READY=1 on, the daemon holds a CLOCK_REALTIME timerfd armed with TFD_TIMER_CANCEL_ON_SET")
    func daemonWatchesTheWallClock() throws {
        let rig = try PushwooshRig.start { $0.setDefaultReply(.hang, for: "getFeatureFlags") }
        defer { rig.stop() }
        let daemon = rig.daemon
        let pid = daemon.process.processIdentifier
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        let watches = descriptors.filter { fd in
            let info = (try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8)) ?? ""
            // clockid 0 is CLOCK_REALTIME; settime flags 03 are TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET.
            return info.contains("clockid: 0\n") && info.contains("settime flags: 03\n")
        }
        #expect(watches.count == 1, "descriptors: \(descriptors)")
    }
}
