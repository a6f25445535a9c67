/// Immutable bytes at a stable address, shared by every connection that sends them.
///
/// A `flagsChanged` for a thousand subscribers, or a 1 MiB `getAll` asked for by many clients, is encoded
/// once and queued by reference: memory grows with what differs per connection (a few bytes of prefix),
/// not with the number of connections.
final class ByteChunk: @unchecked Sendable {
    // @unchecked: the storage is written once in init and only read afterwards.
    let base: UnsafeMutableRawPointer
    let count: Int

    init(_ bytes: some Collection<UInt8>) {
        count = bytes.count
        base = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 1)
        // Contiguous bytes (an array: the flag list, a listing) are copied in one step rather than element by
        // element, which in a debug build made a change of a large set cost milliseconds per megabyte.
        let copied: Void? = bytes.withContiguousStorageIfAvailable { source in
            guard let start = source.baseAddress else { return }
            base.copyMemory(from: start, byteCount: source.count)
        }
        if copied == nil {
            let buffer = UnsafeMutableRawBufferPointer(start: base, count: count)
            _ = buffer.initializeMemory(as: UInt8.self, from: bytes)
        }
    }

    deinit {
        base.deallocate()
    }
}
