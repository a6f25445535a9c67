import CLinux

/// Settings of the process itself (`prctl`).
public enum ProcessControl {
    /// Makes the process dumpable or not (`PR_SET_DUMPABLE`). Not dumpable: no core file, and only a process with
    /// `CAP_SYS_PTRACE` may read its memory.
    public static func setDumpable(_ dumpable: Bool) throws(SystemError) {
        try syscall("prctl(PR_SET_DUMPABLE)") { pwflagsd_prctl_set_dumpable(dumpable ? 1 : 0) }
    }

    /// Whether the process is dumpable (`PR_GET_DUMPABLE`): what `setDumpable` last set, or the kernel's default.
    public static var isDumpable: Bool {
        pwflagsd_prctl_get_dumpable() == 1
    }

    /// Hands memory that malloc holds free back to the system (`malloc_trim`), after a large structure is freed,
    /// so that the process's size follows what it holds rather than its peak.
    public static func returnFreedMemory() {
        _ = malloc_trim(0)
    }

    /// The bytes malloc holds free in its heaps (`mallinfo2`'s `fordblks`): freed, not yet reused, whether or
    /// not their pages were handed back.
    public static func freeHeapBytes() -> Int {
        Int(clamping: mallinfo2().fordblks)
    }

    /// Bounds the number of malloc arenas (`mallopt(M_ARENA_MAX)`); false when glibc refused.
    @discardableResult
    public static func limitMallocArenas(to count: Int32) -> Bool {
        mallopt(M_ARENA_MAX, count) == 1
    }

    /// Fixes the size from which malloc serves a block with a mapping of its own, unmapped when freed
    /// (`mallopt(M_MMAP_THRESHOLD)`; glibc no longer moves it); false when glibc refused.
    @discardableResult
    public static func setMallocMmapThreshold(_ bytes: Int32) -> Bool {
        mallopt(M_MMAP_THRESHOLD, bytes) == 1
    }
}
