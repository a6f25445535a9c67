import Foundation
import PWFlagsTestKit

#if canImport(Glibc)
    import Glibc
#endif

/// How often an idle daemon wakes: the context switches of all its threads over a minute, on a local flags file
/// like the demo's, with no client, without a watchdog and with one (docs/performance.md says where each
/// remaining wakeup comes from).
enum Wakeups {
    /// The watchdog period of the second run; the daemon pings at half of it.
    static let watchdogSeconds = 20

    static func run(bench: Benchmark, quick: Bool, report: Report) throws {
        let seconds = quick ? 15 : 60
        let section = "idle wakeups, local flags, no client (\(seconds) s)"
        for watchdog in [nil, watchdogSeconds] {
            let daemon = try bench.localDaemon(
                flags: 4, name: "idle",
                environment: watchdog.map { ["WATCHDOG_USEC": String($0 * 1_000_000)] } ?? [:])
            defer { daemon.cleanUp() }
            let pid = daemon.process.processIdentifier
            // The start's own work ends first: threads the runtime started for it leave after their idle time.
            Thread.sleep(forTimeInterval: 7)
            guard let before = contextSwitches(of: pid) else { continue }
            Thread.sleep(forTimeInterval: Double(seconds))
            guard let after = contextSwitches(of: pid) else { continue }
            let perMinute = Double(after - before) * 60 / Double(seconds)
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

    /// The voluntary and involuntary context switches of every thread of `pid` so far; nil when it is gone.
    static func contextSwitches(of pid: Int32) -> Int? {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else {
            return nil
        }
        var total = 0
        for thread in threads {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8)
            else { continue }
            // voluntary_ctxt_switches and nonvoluntary_ctxt_switches.
            for line in status.split(separator: "\n") where line.contains("ctxt_switches:") {
                total += Int(line.split(separator: "\t").last.map(String.init) ?? "") ?? 0
            }
        }
        return total
    }
}
