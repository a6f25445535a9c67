import FlagsCore

/// The bodies of one change's notifications, one for each distinct set of keys its subscribers named (every key
/// being one such set): subscribers naming the same keys share one body, queued by reference, instead of a copy
/// each. Made for one change and dropped after it; the line socket's and Varlink's fan-outs use it.
struct ChangeTails {
    private let update: FlagUpdate
    private let make: (FlagDiff) -> [UInt8]
    private var made: [Set<FlagKey>?: ByteChunk?] = [:]

    /// The tails of `update`, `make` writing the body of a change restricted to a subscriber's keys.
    init(_ update: FlagUpdate, make: @escaping (FlagDiff) -> [UInt8]) {
        self.update = update
        self.make = make
    }

    /// The body for a subscriber of `keys` (nil: every key); nil when the change touches none of them.
    mutating func tail(for keys: Set<FlagKey>?) -> ByteChunk? {
        if let known = made[keys] { return known }
        let diff = keys.map { update.diff.restricted(to: $0) } ?? update.diff
        let chunk = diff.isEmpty ? nil : ByteChunk(make(diff))
        made[keys] = chunk
        return chunk
    }
}
