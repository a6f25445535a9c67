import Testing

@testable import FlagsDaemon

/// The trim that follows the memory itself (`MemoryReturn.tick`): whatever freed it, a burst is given back, and a
/// loop with nothing to do is never woken for it.
@Suite(.hangLimit) struct MemoryReturnLookTests {
    static let second: UInt64 = 1_000_000_000

    @Test("Free memory that grew by the threshold makes a trim due, which runs once the burst is quiet")
    func growthMakesATrimDue() throws {
        var memory = MemoryReturn()
        var free = 1 << 20
        var now = 10 * Self.second
        memory.tick(now: now) { free }
        #expect(memory.deadline == nil, "nothing grew: no look or trim is due")
        // A burst frees 8 MiB; the loop's next round, past the spacing, sees it.
        free += 8 << 20
        now += MemoryReturn.spacing
        memory.tick(now: now) { free }
        let deadline = try #require(memory.deadline)
        #expect(deadline == now + MemoryReturn.quiet)
        memory.tick(now: deadline) { free }
        // Trimmed; one more look, at the spacing's end, counts growth from what is free now.
        #expect(memory.deadline == now + MemoryReturn.spacing)
        now += MemoryReturn.spacing
        memory.tick(now: now) { free }
        #expect(memory.deadline == nil)
        // Still free in malloc's count once handed back: no second trim for the same memory.
        now += MemoryReturn.spacing
        memory.tick(now: now) { free }
        #expect(memory.deadline == nil)
    }

    @Test("Growth below the threshold, or memory reused, makes no trim")
    func smallGrowthMakesNone() {
        var memory = MemoryReturn()
        var now = 10 * Self.second
        for free in [8 << 20, 4 << 20, 6 << 20, 7 << 20] {
            memory.tick(now: now) { free }
            now += MemoryReturn.spacing
        }
        #expect(memory.deadline == nil)
    }

    @Test("A round of work inside the spacing makes one look due at its end, and no more")
    func aLookInsideTheSpacingWaitsForItsEnd() {
        var memory = MemoryReturn()
        let start = 10 * Self.second
        memory.tick(now: start) { 1 << 20 }
        memory.tick(now: start + 1_000_000) { 1 << 20 }
        #expect(memory.deadline == start + MemoryReturn.spacing)
        memory.tick(now: start + MemoryReturn.spacing) { 1 << 20 }
        #expect(memory.deadline == nil, "looked: the loop may sleep")
    }
}
