/// Values keyed by file descriptor, kept in an array indexed by the descriptor: a lookup is one index, not a hash.
/// The kernel hands out the lowest free descriptor, so the numbers stay small and dense; the loop looks up a
/// descriptor several times for every request it answers (its owner, its connection, whether it is still open).
///
/// The array grows to the highest descriptor held and shrinks again as the high ones close, so a burst of
/// connections does not keep its slots. Iteration is in descriptor order.
struct DescriptorTable<Value> {
    private var slots: [Value?] = []
    /// The descriptors that hold a value.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    subscript(descriptor: Int32) -> Value? {
        get {
            let index = Int(descriptor)
            return index >= 0 && index < slots.count ? slots[index] : nil
        }
        set {
            let index = Int(descriptor)
            guard index >= 0 else { return }
            if let newValue {
                if index >= slots.count { slots.append(contentsOf: repeatElement(nil, count: index + 1 - slots.count)) }
                if slots[index] == nil { count += 1 }
                slots[index] = newValue
            } else if index < slots.count, slots[index] != nil {
                slots[index] = nil
                count -= 1
                if index == slots.count - 1 { dropFreeTail() }
            }
        }
    }

    /// The slots the storage has room for now (a test's look at the shrinking).
    var storedSlots: Int { slots.capacity }

    /// The values held, in descriptor order.
    var values: [Value] { slots.compactMap { $0 } }

    /// Removes the values `remove` picks.
    mutating func removeAll(where remove: (Value) -> Bool) {
        for index in slots.indices {
            guard let value = slots[index], remove(value) else { continue }
            slots[index] = nil
            count -= 1
        }
        dropFreeTail()
    }

    /// Drops the free slots past the highest descriptor held, and gives back the storage a burst left: at a
    /// quarter of its capacity or less, the slots move to storage of their own size.
    private mutating func dropFreeTail() {
        while let last = slots.last, last == nil { slots.removeLast() }
        guard slots.capacity > 64, slots.count <= slots.capacity / 4 else { return }
        // `Array(slots)` would share the large buffer: a copy of its own is made and the old one freed.
        var smaller: [Value?] = []
        smaller.reserveCapacity(slots.count)
        smaller.append(contentsOf: slots)
        slots = smaller
    }
}
