import FlagsCore
import TestSupport
import Testing

/// How old a disk cache is at start (R7, R15): by the boot clock in the same boot, by the wall clock after a
/// reboot, and unknown when the wall clock reads earlier than the fetch.
@Suite(.hangLimit) struct CacheAgeTests {
    let wallFetch = 1_800_000_000.0
    let hour = 3600.0

    func record(bootID: String? = "boot-a", bootFetchedAt: Double? = 500) -> CacheAge.Record {
        CacheAge.Record(wallFetchedAt: wallFetch, bootID: bootID, bootFetchedAt: bootFetchedAt)
    }

    @Test("Same boot: the age is the boot-clock time since the fetch, whatever the wall clock did since")
    func sameBootUsesTheBootClock() {
        let setBack = CacheAge.Reading(bootID: "boot-a", boot: 800, wall: wallFetch - 2 * hour)
        #expect(CacheAge.judge(record(), at: setBack) == .known(300))
        let setForward = CacheAge.Reading(bootID: "boot-a", boot: 800, wall: wallFetch + 365 * 24 * hour)
        #expect(CacheAge.judge(record(), at: setForward) == .known(300))
    }

    @Test("Another boot: the age is the wall-clock time since the fetch")
    func otherBootUsesTheWallClock() {
        let reading = CacheAge.Reading(bootID: "boot-b", boot: 20, wall: wallFetch + hour)
        #expect(CacheAge.judge(record(), at: reading) == .known(hour))
    }

    @Test("A cache of the old format (no boot id) is judged by the wall clock")
    func oldFormatUsesTheWallClock() {
        let reading = CacheAge.Reading(bootID: "boot-a", boot: 800, wall: wallFetch + 90)
        #expect(CacheAge.judge(record(bootID: nil, bootFetchedAt: nil), at: reading) == .known(90))
    }

    @Test("Another boot with the wall clock earlier than the fetch (a device booting at 1970): the age is unknown")
    func wallEarlierThanTheFetchIsUnknown() {
        let reading = CacheAge.Reading(bootID: "boot-b", boot: 20, wall: 30)
        #expect(CacheAge.judge(record(), at: reading) == .unknown)
    }

    @Test("Without a boot id of this machine the wall clock judges")
    func noBootIDUsesTheWallClock() {
        let reading = CacheAge.Reading(bootID: nil, boot: 800, wall: wallFetch + 10)
        #expect(CacheAge.judge(record(), at: reading) == .known(10))
    }

    @Test("Same boot id but a boot-clock time ahead of now (a broken file) falls back to the wall clock")
    func bootTimeAheadFallsBack() {
        let reading = CacheAge.Reading(bootID: "boot-a", boot: 100, wall: wallFetch + 10)
        #expect(CacheAge.judge(record(), at: reading) == .known(10))
    }
}
