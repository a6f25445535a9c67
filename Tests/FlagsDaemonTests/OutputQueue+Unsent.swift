@testable import FlagsDaemon

extension OutputQueue {
    /// A copy of every byte not yet written, in order: what the peer would read next.
    var unsent: [UInt8] {
        var all: [UInt8] = []
        for (index, chunk) in chunks.enumerated() {
            chunk.withBytes { all.append(contentsOf: $0.dropFirst(index == 0 ? chunkOffset : 0)) }
        }
        all.append(contentsOf: bytes[bytesOffset...])
        return all
    }
}
