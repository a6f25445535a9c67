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
        let buffer = UnsafeMutableRawBufferPointer(start: base, count: count)
        _ = buffer.initializeMemory(as: UInt8.self, from: bytes)
    }

    deinit {
        base.deallocate()
    }
}
