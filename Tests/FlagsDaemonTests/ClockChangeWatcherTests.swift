import CLinux
import Foundation
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The wall-clock change watcher on the real `timerfd` (the machine's clock is never changed by a test).
///
/// The host's clock may still be set while a test runs (NTP stepping it, a virtual machine resumed or migrated:
/// a CI run once saw exactly that), so "no change" is judged against a witness: a second timer armed the same way
/// before the one under test and read after it. A window in which the witness saw a change proves nothing about
/// quiet, so it is tried again, a few times at most.
@Suite(.hangLimit) struct ClockChangeWatcherTests {
    @Test("The timer arms with TFD_TIMER_CANCEL_ON_SET and reports no change while the clock is left alone")
    func armsAndStaysQuiet() async throws {
        let timer = try TimerFD()
        defer { timer.close() }
        let fd = timer.descriptor
        let quiet = try await Self.inQuietWindow {
            try ClockChangeWatcher.arm(timer)
            return ClockChangeWatcher.consume(timer)
        }
        #expect(quiet == false)
        var spec = itimerspec()
        #expect(timerfd_gettime(fd, &spec) == 0)
        // Armed about `horizon` ahead: the timer is pending, not expired.
        #expect(Int(spec.it_value.tv_sec) > ClockChangeWatcher.horizon - 60)
        // The kernel's view: a CLOCK_REALTIME timer (clockid 0) set with TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET.
        let info = (try? String(contentsOfFile: "/proc/self/fdinfo/\(fd)", encoding: .utf8)) ?? ""
        #expect(info.contains("clockid: 0\n"), "\(info)")
        #expect(info.contains("settime flags: 03\n"), "\(info)")
    }

    @Test("The watcher runs until its task is cancelled, and calls nobody without a change")
    func runsUntilCancelled() async throws {
        let calls = try await Self.inQuietWindow {
            let counter = Counter()
            let watcher = try ClockChangeWatcher { await counter.add() }
            let task = Task { await watcher.run() }
            try await Task.sleep(for: .milliseconds(100))
            task.cancel()
            // Returning at all is the first half of the claim: the watcher ends when its task is cancelled.
            await task.value
            return await counter.count
        }
        #expect(calls == 0, "no window of \(Self.attempts) was free of a real clock change")
    }

    /// How many windows a test tries before it gives up on finding one without a real clock change.
    static let attempts = 5

    /// `body`'s result from the first window in which a witness, a timer armed as the watcher arms its own, saw
    /// no change of the host's clock; nil if every window saw one.
    static func inQuietWindow<T>(_ body: () async throws -> T) async throws -> T? {
        for _ in 0..<attempts {
            let witness = try ClockChangeWatcher.armedTimer()
            defer { witness.close() }
            let result = try await body()
            if !ClockChangeWatcher.consume(witness) { return result }
        }
        return nil
    }

    actor Counter {
        var count = 0
        func add() { count += 1 }
    }
}
