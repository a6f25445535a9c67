import TestSupport
import Testing

@testable import FlagsDaemon

/// The loop's table of descriptors: lookups by number, the count, iteration in descriptor order, and storage that
/// shrinks once a burst of high descriptors has closed.
@Suite(.hangLimit) struct DescriptorTableTests {
    final class Entry {
        let name: String
        init(_ name: String) { self.name = name }
    }

    @Test func holdsReplacesAndRemovesByDescriptor() {
        var table = DescriptorTable<Entry>()
        #expect(table.isEmpty)
        table[5] = Entry("five")
        table[3] = Entry("three")
        table[5] = Entry("five again")
        #expect(table.count == 2)
        #expect(table[5]?.name == "five again")
        #expect(table[4] == nil)
        #expect(table[900] == nil)
        #expect(table[-1] == nil)
        #expect(table.values.map(\.name) == ["three", "five again"])

        table[3] = nil
        table[3] = nil
        table[-1] = Entry("never")
        #expect(table.count == 1)
        #expect(table.values.map(\.name) == ["five again"])
        table[5] = nil
        #expect(table.isEmpty)
        #expect(table.values.isEmpty)
    }

    @Test func removesWhatThePredicatePicks() {
        var table = DescriptorTable<Entry>()
        for descriptor in Int32(0)..<10 { table[descriptor] = Entry(descriptor.isMultiple(of: 2) ? "even" : "odd") }
        table.removeAll { $0.name == "odd" }
        #expect(table.count == 5)
        #expect(table[4]?.name == "even")
        #expect(table[5] == nil)
    }

    @Test func aClosedBurstLeavesNoSlotsBehind() {
        var table = DescriptorTable<Entry>()
        table[3] = Entry("listener")
        for descriptor in Int32(10)..<5000 { table[descriptor] = Entry("burst") }
        #expect(table.count == 4991)
        for descriptor in Int32(10)..<5000 { table[descriptor] = nil }
        #expect(table.count == 1)
        #expect(table[3]?.name == "listener")
        #expect(table.storedSlots <= 64)
    }
}
