import FlagsCore
import Testing

@Suite("Waiting with a deadline")
struct DeadlineTests {
    @Test("An operation that finishes in time gives its result")
    func resultInTime() async {
        let value = await withDeadline(.seconds(30)) { 42 }
        #expect(value == 42)
    }

    @Test("An operation that outlasts the deadline gives nil, and is cancelled")
    func nilAfterTheDeadline() async {
        let value: Int? = await withDeadline(.milliseconds(20)) {
            try? await Task.sleep(for: .seconds(30))
            return Task.isCancelled ? nil : 1
        }
        #expect(value == nil)
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
