import FlagsCore
import OFREP
import UnixIO

/// The OFREP form of the flags the listener serves, owned by the event loop's thread: the snapshot comes with each
/// change (`ChangeFeed`), and the answer is rebuilt only when the snapshot changed, so the bulk answer is built
/// once per change and shared by every request.
///
/// Building is bounded by `maximumBulkBytes` (`OFREPFlags`). When the answer it replaces, or the one it built, was
/// large, the bytes are reported (`takeReleased`) to the loop's `MemoryReturn`, which gives the freed memory back
/// to the system rather than leave it in malloc's free lists: the daemon's size falls back once a large set of
/// overrides is cleared.
struct OFREPFlagsCache {
    private let maximumBulkBytes: Int
    private let logger: Logger
    /// The flags served: the feed's latest snapshot.
    private var snapshot: FlagSnapshot
    private var cached: (snapshot: FlagSnapshot, flags: OFREPFlags)?
    /// Bytes of large answers replaced or built since `takeReleased` was last asked.
    private var released = 0

    /// Answers this large or larger give their memory back to the system when replaced.
    static let trimThreshold = 1 << 20

    init(snapshot: FlagSnapshot, maximumBulkBytes: Int, logger: Logger) {
        self.snapshot = snapshot
        self.maximumBulkBytes = maximumBulkBytes
        self.logger = logger
    }

    /// Serves `snapshot` from now on (a change the feed brought); older ones are ignored.
    mutating func serve(_ newer: FlagSnapshot) {
        if newer.revision > snapshot.revision { snapshot = newer }
    }

    /// The revision of the snapshot served.
    var revision: Int { snapshot.revision }

    /// The flags of the snapshot served.
    mutating func current() -> OFREPFlags {
        if let cached, cached.snapshot === snapshot { return cached.flags }
        let previousBytes = cached.map { Self.bulkBytes($0.flags) } ?? 0
        cached = nil
        let flags = OFREPFlags(snapshot.flags, maximumBulkBytes: maximumBulkBytes)
        cached = (snapshot, flags)
        if case .tooLarge(let built) = flags.bulk {
            logger.warning(
                "OFREP: the bulk answer is over its limit; bulk requests get 500 until the flags shrink",
                ["BYTES_AT_LEAST": String(built), "LIMIT": String(maximumBulkBytes)])
        }
        let large = max(previousBytes, Self.bulkBytes(flags))
        if large >= Self.trimThreshold { released += large }
        return flags
    }

    /// The bytes of large answers replaced or built since the last call, for the loop's `MemoryReturn`.
    mutating func takeReleased() -> Int {
        defer { released = 0 }
        return released
    }

    private static func bulkBytes(_ flags: OFREPFlags) -> Int {
        switch flags.bulk {
        case .body(let body, _): body.count
        case .tooLarge(let built): built
        }
    }
}
