import CLinux
import Foundation

/// Puts a client and the daemon it measures on one CPU for a comparison of two round trips. On a machine with
/// several CPUs the scheduler places each of the daemon's threads on its own, and a round trip whose two ends
/// share a CPU costs a third of one whose ends do not (13 µs against 40 to 50 µs on the 2-core machine): two
/// paths served by different daemon threads then compare their placements, not their code. On one CPU each round
/// trip is the two ends' work and two context switches, the same for both paths.
struct CPUPin {
    private let saved: [UInt]

    /// Pins the calling thread and every thread of process `pid` (those it starts later inherit it) to the first
    /// CPU the calling thread may use; nil when the affinity cannot be read or set.
    init?(withProcess pid: pid_t) {
        var current = [UInt](repeating: 0, count: 16)
        guard pwflagsd_sched_getaffinity(0, &current) > 0,
            let word = current.firstIndex(where: { $0 != 0 })
        else { return nil }
        var one = [UInt](repeating: 0, count: 16)
        one[word] = 1 << UInt(current[word].trailingZeroBitCount)
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        guard !threads.isEmpty, pwflagsd_sched_setaffinity(0, one) == 0 else { return nil }
        for thread in threads.compactMap({ pid_t($0) }) {
            _ = pwflagsd_sched_setaffinity(thread, one)
        }
        saved = current
    }

    /// Gives the calling thread back the CPUs it could use before.
    func release() {
        _ = pwflagsd_sched_setaffinity(0, saved)
    }
}
