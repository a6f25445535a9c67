import UnixIO

/// Bounds glibc's malloc to two arenas, unless the operator chose a number (`MALLOC_ARENA_MAX`).
///
/// glibc gives a thread that meets a locked arena an arena of its own, up to eight per core, and keeps every
/// arena's freed pages for later. The daemon's few busy threads (the socket loop, the OFREP loop, the cooperative
/// pool, the HTTP exchanges) then each hold the high-water mark of what they once allocated: with 10,000 flags
/// and 1,000 subscribers, a change of every flag left 47.7 MiB of anonymous memory resident with the default and
/// 36.3 MiB with two arenas (`pwflags-bench`, memory under load; docs/performance.md). The threads seldom
/// allocate at the same moment, so two arenas cost no measurable throughput.
public enum MallocArenas {
    public static let limit: Int32 = 2

    /// Applies the bound; call before the daemon starts its threads.
    public static func bound(environment: [String: String]) {
        guard environment["MALLOC_ARENA_MAX"] == nil else { return }
        ProcessControl.limitMallocArenas(to: limit)
    }
}
