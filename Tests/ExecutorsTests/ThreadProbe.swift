import Foundation
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// What the tests learn about the thread they run on, and about threads of this process through `/proc`.
enum ThreadProbe {
    /// The calling thread's name (the Glibc module has no `pthread_getname_np`: read from `/proc`).
    static var currentName: String {
        let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return comm.trimmingCharacters(in: .newlines)
    }

    /// The calling thread's kernel id (nor `gettid`: `/proc/thread-self` links to `PID/task/TID`).
    static var currentID: Int32 {
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
        return Int32(link.split(separator: "/").last ?? "") ?? -1
    }

    /// What `/proc/self/task/TID` says of a thread: its state letter (`S` asleep, `R` running), its context
    /// switches and its time on a CPU so far.
    struct Activity: Equatable, CustomStringConvertible {
        var state: Character
        var contextSwitches: Int
        var cpuNanoseconds: Int

        init?(thread: Int32) {
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(thread)/stat", encoding: .utf8),
                let status = try? String(contentsOfFile: "/proc/self/task/\(thread)/status", encoding: .utf8),
                let schedstat = try? String(contentsOfFile: "/proc/self/task/\(thread)/schedstat", encoding: .utf8),
                let nameEnd = stat.lastIndex(of: ")")
            else { return nil }
            state = stat[stat.index(nameEnd, offsetBy: 2)]
            contextSwitches = status.split(separator: "\n").filter { $0.contains("ctxt_switches:") }
                .compactMap { Int($0.split(separator: "\t").last ?? "") }.reduce(0, +)
            cpuNanoseconds = Int(schedstat.split(separator: " ").first ?? "") ?? -1
        }

        var description: String { "state \(state), \(contextSwitches) switches, \(cpuNanoseconds) ns on CPU" }
    }
}

/// A count that threads raise and a test waits on, with a deadline: the tests' one way to learn that jobs ran.
///
/// A test function waits with `reached(_:)`, which suspends it: a test that blocked its thread would hold one of
/// the few threads of the test runner's own cooperative pool, which the tasks it waits for may need (the runtime
/// finishes a sleep there). Jobs on a pool under test that must hold their thread (to show that others run at
/// the same time) use `blockingWait(for:)`.
final class Countdown: @unchecked Sendable {
    // @unchecked: `count` and `waiters` are touched only while `condition` is locked.
    private let condition = NSCondition()
    private var count = 0
    private var waiters: [Int: (target: Int, continuation: CheckedContinuation<Bool, Never>)] = [:]
    private var nextWaiter = 0

    func raise() {
        condition.lock()
        count += 1
        let reached = waiters.filter { $0.value.target <= count }
        for id in reached.keys { waiters[id] = nil }
        condition.broadcast()
        condition.unlock()
        for waiter in reached.values { waiter.continuation.resume(returning: true) }
    }

    /// Whether the count reaches `target` within `timeout`; suspends the calling task meanwhile.
    func reached(_ target: Int, within timeout: Duration = .seconds(10)) async -> Bool {
        await withCheckedContinuation { continuation in
            condition.lock()
            guard count < target else {
                condition.unlock()
                continuation.resume(returning: true)
                return
            }
            nextWaiter += 1
            let id = nextWaiter
            waiters[id] = (target, continuation)
            condition.unlock()
            Task {
                try? await Task.sleep(for: timeout)
                let late = self.condition.withLock { self.waiters.removeValue(forKey: id) }
                late?.continuation.resume(returning: false)
            }
        }
    }

    /// Whether the count reaches `target` within `timeout`, blocking the calling thread meanwhile.
    func blockingWait(for target: Int, timeout: Duration = .seconds(10)) -> Bool {
        let (seconds, attoseconds) = timeout.components
        let deadline = Date().addingTimeInterval(Double(seconds) + Double(attoseconds) * 1e-18)
        condition.lock()
        defer { condition.unlock() }
        while count < target {
            if !condition.wait(until: deadline) { return count >= target }
        }
        return true
    }
}
