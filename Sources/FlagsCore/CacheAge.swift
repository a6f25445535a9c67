/// How old a disk cache is when the daemon starts (R7, R15), judged from what the cache recorded of its fetch.
///
/// In the same boot the boot clock gives the exact age, whatever the wall clock did since. After a reboot only
/// the wall clock can tell, and when it reads earlier than the fetch (a device without a real-time clock
/// booting at 1970, or a clock set back) the age cannot be known at all: the daemon then serves the cache
/// provisionally (see `Refresher`).
public enum CacheAge: Sendable, Equatable {
    /// Seconds since the fetch.
    case known(Double)
    /// The wall clock reads earlier than the fetch, in another boot.
    case unknown

    /// What a cache recorded about its fetch.
    public struct Record: Sendable, Equatable {
        /// Unix seconds (the wall clock) of the fetch.
        public var wallFetchedAt: Double
        /// The boot the fetch happened in (`/proc/sys/kernel/random/boot_id`); nil in the old format.
        public var bootID: String?
        /// Boot-clock seconds of the fetch, in that boot.
        public var bootFetchedAt: Double?

        public init(wallFetchedAt: Double, bootID: String?, bootFetchedAt: Double?) {
            self.wallFetchedAt = wallFetchedAt
            self.bootID = bootID
            self.bootFetchedAt = bootFetchedAt
        }
    }

    /// The clocks as they read now.
    public struct Reading: Sendable, Equatable {
        public var bootID: String?
        /// Boot-clock seconds.
        public var boot: Double
        /// Unix seconds.
        public var wall: Double

        public init(bootID: String?, boot: Double, wall: Double) {
            self.bootID = bootID
            self.boot = boot
            self.wall = wall
        }
    }

    /// The age of `record` at `reading`.
    public static func judge(_ record: Record, at reading: Reading) -> CacheAge {
        if let bootID = record.bootID, bootID == reading.bootID, let bootFetchedAt = record.bootFetchedAt,
            bootFetchedAt <= reading.boot
        {
            return .known(reading.boot - bootFetchedAt)
        }
        let wallAge = reading.wall - record.wallFetchedAt
        return wallAge >= 0 ? .known(wallAge) : .unknown
    }
}
