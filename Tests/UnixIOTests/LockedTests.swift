import TestSupport
import Testing
import UnixIO

/// The one lock type: what `withLock` does under contention, with errors, and with the value's life.
@Suite(.hangLimit) struct LockedTests {
    struct Refused: Error, Equatable {}

    final class Tracked: Sendable {
        let gone: Locked<Bool>
        init(_ gone: Locked<Bool>) { self.gone = gone }
        deinit { gone.withLock { $0 = true } }
    }

    @Test func incrementsFromManyThreadsAreNeverLost() async {
        let counter = Locked(0)
        let threads = 8
        let rounds = 10_000
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let finished = Locked(0)
            for index in 0..<threads {
                DetachedThread.start(name: "locked-\(index)") {
                    for _ in 0..<rounds { counter.withLock { $0 += 1 } }
                    let last = finished.withLock { count in
                        count += 1
                        return count == threads
                    }
                    if last { done.resume() }
                }
            }
        }
        #expect(counter.withLock { $0 } == threads * rounds)
    }

    @Test func withLockHandsBackItsResultAndItsTypedErrorAndKeepsWhatWasWrittenBefore() {
        let locked = Locked([1, 2])
        #expect(locked.withLock { $0.count } == 2)
        #expect(throws: Refused()) {
            try locked.withLock { (value: inout [Int]) throws(Refused) -> Void in
                value.append(3)
                throw Refused()
            }
        }
        // A body that throws has still written what it wrote before; the lock is free again.
        #expect(locked.withLock { $0 } == [1, 2, 3])
    }

    @Test func theValueIsReleasedWithTheLock() {
        let gone = Locked(false)
        var locked: Locked<Tracked>? = Locked(Tracked(gone))
        #expect(locked != nil)
        locked = nil
        #expect(gone.withLock { $0 })
    }

    @Test func aLockOverNothingGuardsASection() {
        let section = Locked(())
        var entered = 0
        for _ in 0..<3 { section.withLock { _ in entered += 1 } }
        #expect(entered == 3)
    }
}
