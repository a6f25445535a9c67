import FoundationEssentials
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's malloc settings: what it sets, that an operator's choice wins, and what the fixed mmap threshold
/// does for memory freed after a large change.
@Suite(.hangLimit) struct MallocTuningTests {
    @Test("With nothing in the environment, two arenas and a fixed mmap threshold of 256 KiB")
    func defaults() {
        #expect(MallocTuning.settings(environment: [:]) == .init(arenas: 2, mmapThreshold: 256 * 1024))
    }

    @Test(
        "An operator's setting, by variable or in GLIBC_TUNABLES, is left to glibc",
        arguments: [
            (["MALLOC_ARENA_MAX": "8"], MallocTuning.Settings(arenas: nil, mmapThreshold: 256 * 1024)),
            (["MALLOC_MMAP_THRESHOLD_": "65536"], MallocTuning.Settings(arenas: 2, mmapThreshold: nil)),
            (
                ["GLIBC_TUNABLES": "glibc.malloc.arena_max=1"],
                MallocTuning.Settings(arenas: nil, mmapThreshold: 262_144)
            ),
            (
                ["GLIBC_TUNABLES": "glibc.malloc.tcache_count=0:glibc.malloc.mmap_threshold=1048576"],
                MallocTuning.Settings(arenas: 2, mmapThreshold: nil)
            ),
        ])
    func operatorWins(environment: [String: String], expected: MallocTuning.Settings) {
        #expect(MallocTuning.settings(environment: environment) == expected)
    }

    /// glibc's default raises the threshold to the size of a mapped block once it is freed, so the second large
    /// block of the same size comes from the heap and stays resident after it is freed. With the threshold
    /// fixed, the second goes back to the system as the first did. (Under a sanitizer malloc is not glibc's.)
    @Test("A large block freed after another of its size goes back to the system")
    func largeBlocksReturn() throws {
        // Under a sanitizer, malloc is not glibc's and mallopt refuses.
        #expect(ProcessControl.setMallocMmapThreshold(MallocTuning.mmapThreshold) || Sanitizer.isActive)
        let size = 16 << 20
        func cycle() -> Double {
            let block = malloc(size)!
            memset(block, 1, size)
            free(block)
            return Measure.memory(of: getpid()).anon
        }
        let before = Measure.memory(of: getpid()).anon
        _ = cycle()
        let after = cycle()
        // 16 MiB kept would be 16,384 KiB; the rest of the test process moves a few hundred at most meanwhile.
        #expect(Sanitizer.isActive || after - before < 4096, "RssAnon \(before) -> \(after) KiB")
    }
}
