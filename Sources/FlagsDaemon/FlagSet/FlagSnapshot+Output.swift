import FlagsCore

extension FlagSnapshot {
    /// A flag's encoding from this size on is queued by reference, not copied, when a listing names keys.
    static let sharedFrom = 128

    /// Queues the JSON array of the flags of `keys` (those the set has), sorted by key; of every flag when
    /// `keys` is nil. The line socket's `getAll` and `listen` and Varlink's `List` and `Listen` write their flags
    /// with it.
    ///
    /// Nothing large is copied per connection: every flag is the snapshot's shared list, and a flag of
    /// `sharedFrom` bytes or more is the snapshot's own encoding, queued by reference. A connection naming keys
    /// holds its reply's structure (a reference and a separator per large flag) and the small flags' bytes, at
    /// most `sharedFrom` bytes a key. Before, each such reply was a private copy of the flags it named: a few
    /// hundred subscriptions to every key of a 7.9 MB set, never read, took the daemon to 3.8 GB.
    func writeFlags(of keys: Set<FlagKey>?, to output: inout OutputQueue) {
        guard let keys else {
            if encodedList.count < 4096 {
                output.bytes.append(
                    contentsOf: UnsafeRawBufferPointer(start: encodedList.base, count: encodedList.count))
            } else {
                output.append(shared: encodedList)
            }
            return
        }
        output.bytes.append(UInt8(ascii: "["))
        var first = true
        for key in keys.sorted() {
            guard let flag = encoded[key] else { continue }
            if !first { output.bytes.append(UInt8(ascii: ",")) }
            first = false
            if flag.count >= Self.sharedFrom {
                output.append(flag)
            } else {
                output.bytes.append(contentsOf: flag)
            }
        }
        output.bytes.append(UInt8(ascii: "]"))
    }
}
