import Foundation
import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Detached threads: the body runs once, on a thread of its own, named for `ps` and the journal.
@Suite(.hangLimit) struct DetachedThreadTests {
    /// Starts `body` on a detached thread named `name` and returns what it returned, waiting for the thread.
    static func run<T: Sendable>(named name: String, _ body: @escaping @Sendable () -> T) async -> T? {
        await withCheckedContinuation { (done: CheckedContinuation<T?, Never>) in
            if !DetachedThread.start(name: name, { done.resume(returning: body()) }) { done.resume(returning: nil) }
        }
    }

    static func threadName() -> String {
        let text = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return text.trimmingCharacters(in: .newlines)
    }

    @Test func theThreadIsNamedWithTheNamesFirst15Bytes() async {
        #expect(await Self.run(named: "pwflagsd-test", Self.threadName) == "pwflagsd-test")
        #expect(await Self.run(named: "pwflagsd-a-long-thread-name", Self.threadName) == "pwflagsd-a-long")
    }

    @Test func theBodyRunsOnceOnAnotherThread() async {
        let runs = Locked(0)
        let caller = Self.threadName()
        let thread = await Self.run(named: "pwf-once") { () -> pthread_t in
            runs.withLock { $0 += 1 }
            return pthread_self()
        }
        #expect(thread != nil && thread != pthread_self())
        #expect(runs.withLock { $0 } == 1)
        #expect(Self.threadName() == caller)
    }

    @Test func manyThreadsStartAndEachRunsItsOwnBody() async {
        let seen = Locked(Set<Int>())
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<32 {
                group.addTask { _ = await Self.run(named: "pwf-\(index)") { seen.withLock { _ = $0.insert(index) } } }
            }
        }
        #expect(seen.withLock { $0 } == Set(0..<32))
    }
}
