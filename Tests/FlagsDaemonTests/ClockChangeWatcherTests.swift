import CLinux
import Foundation
import Testing
import UnixIO

@testable import FlagsDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The wall-clock change watcher on the real `timerfd` (the machine's clock is never changed by a test).
@Suite struct ClockChangeWatcherTests {
    @Test("The timer arms with TFD_TIMER_CANCEL_ON_SET and reports no change while the clock is left alone")
    func armsAndStaysQuiet() throws {
        let timer = try TimerFD()
        defer { timer.close() }
        let fd = timer.descriptor
        try ClockChangeWatcher.arm(timer)
        var spec = itimerspec()
        #expect(timerfd_gettime(fd, &spec) == 0)
        // Armed about `horizon` ahead: the timer is pending, not expired.
        #expect(Int(spec.it_value.tv_sec) > ClockChangeWatcher.horizon - 60)
        #expect(!ClockChangeWatcher.consume(timer))
        // The kernel's view: a CLOCK_REALTIME timer (clockid 0) set with TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET.
        let info = (try? String(contentsOfFile: "/proc/self/fdinfo/\(fd)", encoding: .utf8)) ?? ""
        #expect(info.contains("clockid: 0\n"), "\(info)")
        #expect(info.contains("settime flags: 03\n"), "\(info)")
    }

    @Test("The watcher runs until its task is cancelled, and calls nobody without a change")
    func runsUntilCancelled() async throws {
        let calls = Counter()
        let watcher = try ClockChangeWatcher()
        let task = Task { await watcher.run { await calls.add() } }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        await task.value
        #expect(await calls.count == 0)
    }

    actor Counter {
        var count = 0
        func add() { count += 1 }
    }
}
