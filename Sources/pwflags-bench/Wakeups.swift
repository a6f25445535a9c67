import Foundation
import PWFlagsTestKit

#if canImport(Glibc)
    import Glibc
#endif

/// How often an idle daemon wakes: the voluntary context switches of each of its threads over a minute, on a
/// local flags file like the demo's, with no client, without a watchdog and with one (docs/performance.md says
/// where each remaining wakeup comes from).
///
/// A thread that wakes, works and sleeps again makes one voluntary switch. Involuntary ones are not wakeups: the
/// scheduler took the CPU from a thread that was running, as when the bench's own notify-socket reader, woken by
/// a watchdog ping, preempts the daemon's thread that sent it (they counted 0 to 2 a minute more on a loaded
/// machine). Each thread is read once a second: one that ends in the window keeps what it did, one that starts in
/// it counts from zero.
enum Wakeups {
    /// The watchdog period of the second run; the daemon pings at half of it.
    static let watchdogSeconds = 20

    static func run(bench: Benchmark, extent: Extent, report: Report) throws {
        let seconds = extent.pick(full: 60, quick: 15, smoke: 1)
        let section = "idle wakeups, local flags, no client (\(seconds) s)"
        for watchdog in [nil, watchdogSeconds] {
            let daemon = try bench.localDaemon(
                flags: 4, name: "idle",
                environment: watchdog.map { ["WATCHDOG_USEC": String($0 * 1_000_000)] } ?? [:])
            defer { daemon.cleanUp() }
            let pid = daemon.process.processIdentifier
            // The start's own work ends first: threads the runtime started for it leave after their idle time.
            Thread.sleep(forTimeInterval: extent == .smoke ? 0.2 : 7)
            guard let wakeups = count(of: pid, seconds: seconds) else { continue }
            let perMinute = Double(wakeups) * 60 / Double(seconds)
            if let watchdog {
                // One ping per half period, and the minute's one wakeup at most besides.
                let goal = Double(60 / (watchdog / 2) + 1)
                report.add(
                    section, "wakeups per minute, WatchdogSec=\(watchdog)s", perMinute, "1/min",
                    target: "≤ \(Int(goal))", met: perMinute <= goal)
            } else {
                report.add(
                    section, "wakeups per minute, no watchdog", perMinute, "1/min", target: "≤ 1", met: perMinute <= 1)
            }
        }
    }

    /// The voluntary context switches of the threads of `pid` over the next `seconds`, read once a second; nil
    /// when the process is gone.
    static func count(of pid: Int32, seconds: Int) -> Int? {
        guard let start = voluntarySwitches(of: pid) else { return nil }
        var latest = start
        for _ in 0..<seconds {
            Thread.sleep(forTimeInterval: 1)
            guard let now = voluntarySwitches(of: pid) else { return nil }
            latest.merge(now) { _, new in new }
        }
        return latest.reduce(0) { total, thread in total + thread.value - (start[thread.key] ?? 0) }
    }

    /// `voluntary_ctxt_switches` of every thread of `pid` now, by thread id; nil when it is gone.
    static func voluntarySwitches(of pid: Int32) -> [String: Int]? {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else {
            return nil
        }
        var switches: [String: Int] = [:]
        for thread in threads {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
                let value = line.split(separator: "\t").last.flatMap({ Int($0) })
            else { continue }
            switches[thread] = value
        }
        return switches
    }
}
