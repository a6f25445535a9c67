import FlagsCore

/// The disk cache with its fetch time on both clocks: what the refresher loads at start, writes after a complete
/// response, re-stamps after a wall-clock change, and judges again when its age was unknown (R7, R15).
///
/// The file keeps the wall time of the fetch (judged after a reboot) and the boot id with the boot-clock time
/// (exact in the same boot); in memory the fetch time is on this boot's clock, as the refresh policy counts.
struct CacheTimes: Sendable {
    /// What `load` found.
    enum Loaded: Sendable {
        /// Usable: the flags, and their fetch time on this boot's clock.
        case served(FlagCache.Entry, bootFetchedAt: Double)
        /// Usable, but its age is unknown (another boot, and the wall clock reads earlier than its fetch): it
        /// counts from now until a wall-clock change lets `judgeAgain` tell.
        case provisional(FlagCache.Entry, bootFetchedAt: Double)
        case rejected(FlagCache.Rejection)
    }

    let file: FlagCache
    /// This boot's id; nil when libsystemd cannot tell (then the wall clock judges every cache).
    let bootID: String?
    /// The complete response on disk and its fetch time on this boot's clock; nil when the disk holds nothing
    /// of the current user's that this process can vouch for.
    private var persisted: (entry: FlagCache.Entry, bootFetchedAt: Double)?
    /// The record of a cache served provisionally.
    private var provisional: CacheAge.Record?

    init(file: FlagCache, bootID: String?) {
        self.file = file
        self.bootID = bootID
    }

    /// The cache of this application and user, judged at `reading` against `maxAge`.
    mutating func load(applicationCode: String, userId: String, at reading: CacheAge.Reading, maxAge: Double)
        -> Loaded
    {
        let entry: FlagCache.Entry
        switch file.load(applicationCode: applicationCode, userId: userId) {
        case .success(let loaded): entry = loaded
        case .failure(let rejection): return .rejected(rejection)
        }
        switch CacheAge.judge(entry.record, at: reading) {
        case .known(let age):
            guard age < maxAge else { return .rejected(.tooOld(ageSeconds: age)) }
            persisted = (entry, reading.boot - age)
            return .served(entry, bootFetchedAt: reading.boot - age)
        case .unknown:
            provisional = entry.record
            return .provisional(entry, bootFetchedAt: reading.boot)
        }
    }

    /// Writes a complete response fetched at `reading`.
    mutating func store(_ flags: [Flag], applicationCode: String, userId: String, at reading: CacheAge.Reading)
        throws(StateDirectoryError)
    {
        let entry = FlagCache.Entry(
            applicationCode: applicationCode, userId: userId, fetchedAt: reading.wall, bootID: bootID,
            bootFetchedAt: reading.boot, flags: flags)
        try file.store(entry)
        persisted = (entry, reading.boot)
    }

    /// Removes the file (another user, expiry).
    mutating func remove() throws(StateDirectoryError) {
        persisted = nil
        provisional = nil
        try file.remove()
    }

    /// The flags in memory no longer come from a provisional cache (a response replaced them).
    mutating func replacedInMemory() {
        provisional = nil
    }

    /// After a wall-clock change: the file's wall fetch time, made again from its boot-clock time by the wall
    /// clock as it reads now (`reading`), so that after a reboot its age is judged right. Nothing to do without a
    /// file this process vouches for.
    mutating func restamp(at reading: CacheAge.Reading) throws(StateDirectoryError) {
        guard let (old, bootFetchedAt) = persisted else { return }
        var entry = old
        entry.fetchedAt = reading.wall - (reading.boot - bootFetchedAt)
        entry.bootID = bootID
        entry.bootFetchedAt = bootFetchedAt
        try file.store(entry)
        persisted = (entry, bootFetchedAt)
    }

    /// After a wall-clock change: the age of a provisional cache when it can now be known (then it is no longer
    /// provisional); nil otherwise.
    mutating func judgeAgain(at reading: CacheAge.Reading) -> Double? {
        guard let record = provisional, case .known(let age) = CacheAge.judge(record, at: reading) else {
            return nil
        }
        provisional = nil
        return age
    }
}
