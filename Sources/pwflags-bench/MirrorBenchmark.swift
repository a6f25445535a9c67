import FeatureFlags
import Foundation
import PWFlagsTestKit
import UnixIO

/// The client library's mirror `get`: what an app pays per flag read, on one thread and on two at once.
enum MirrorBenchmark {
    static func run(socketPath: String, extent: Extent, report: Report) async {
        let section = "client library mirror get"
        let flags = FeatureFlags(socketPath: socketPath)
        defer { flags.stop() }
        guard await flags.waitForFirstSnapshot(timeout: .seconds(10)) else {
            report.add(section, "single thread", .nan, "ns", target: "≤ 100", met: false)
            return
        }
        let reads = extent.pick(full: 10_000_000, quick: 2_000_000, smoke: 20_000)
        let single = measure(threads: 1, reads: reads, flags: flags)
        report.add(section, "single thread", single, "ns", target: "≤ 100", met: single <= 100)
        let double = measure(threads: 2, reads: reads, flags: flags)
        report.add(section, "2 threads at once", double, "ns")
    }

    /// CPU nanoseconds per `get`, each thread doing `reads` of them at the same time.
    ///
    /// Thread CPU time rather than wall time: a read is pure computation, and the figure should not count the
    /// time the scheduler gave other processes on a busy machine.
    private static func measure(threads: Int, reads: Int, flags: FeatureFlags) -> Double {
        let total = Locked<UInt64>(0)
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            let start = MonotonicClock.threadCPUNanoseconds()
            var found = 0
            for index in 0..<reads where flags.get(index & 1 == 0 ? "flag_7" : "flag_8") != nil {
                found &+= 1
            }
            let spent = MonotonicClock.threadCPUNanoseconds() - start
            precondition(found == reads, "the mirror lost a flag")
            total.withLock { $0 += spent }
        }
        return Double(total.withLock { $0 }) / Double(reads * threads)
    }
}
