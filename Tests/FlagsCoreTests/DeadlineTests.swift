import FlagsCore
import Synchronization
import TestSupport
import Testing

@Suite("Waiting with a deadline", .hangLimit)
struct DeadlineTests {
    @Test("An operation that finishes in time gives its result")
    func resultInTime() async {
        let value = await withDeadline(.seconds(30)) { 42 }
        #expect(value == 42)
    }

    @Test("An operation that outlasts the deadline gives nil, and is cancelled")
    func nilAfterTheDeadline() async {
        let cancelled = Atomic<Bool>(false)
        let clock = ContinuousClock()
        let start = clock.now
        let value: Int? = await withDeadline(.milliseconds(20)) {
            try? await Task.sleep(for: .seconds(30))
            cancelled.store(Task.isCancelled, ordering: .relaxed)
            return 1
        }
        #expect(value == nil)
        // The operation saw its cancellation (and so its 30-second sleep ended early, which is why the wait did).
        let sawCancellation = cancelled.load(ordering: .relaxed)
        #expect(sawCancellation)
        #expect(clock.now - start < .seconds(10))
    }

    @Test("An operation that gives up (nil) ends the wait at once")
    func givingUpEndsTheWait() async {
        let clock = ContinuousClock()
        let start = clock.now
        let value: Int? = await withDeadline(.seconds(30)) { nil }
        #expect(value == nil)
        #expect(clock.now - start < .seconds(10))
    }
}
