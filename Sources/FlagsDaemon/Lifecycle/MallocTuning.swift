import UnixIO

/// How the daemon sets glibc's malloc at start, unless the operator chose (`MALLOC_ARENA_MAX`,
/// `MALLOC_MMAP_THRESHOLD_`, or either in `GLIBC_TUNABLES`).
///
/// Both settings keep the daemon's size after a burst near what it holds, rather than its peak
/// (docs/performance.md, memory under load):
/// - **Two arenas.** glibc gives a thread that meets a locked arena an arena of its own, up to eight per core, and
///   keeps every arena's freed pages for later. The daemon's few busy threads (the socket loop, the OFREP loop,
///   the cooperative pool, the HTTP exchanges) then each held the high-water mark of what they once allocated:
///   with 10,000 flags and 1,000 subscribers, a change of every flag left 47.7 MiB of anonymous memory resident
///   with the default and 36.3 MiB with two. The threads seldom allocate at the same moment, so two arenas cost
///   no measurable throughput.
/// - **A fixed mmap threshold of 256 KiB.** glibc serves a block this large with its own mapping and unmaps it
///   when freed, but by default raises the threshold to the size of every such block freed, so that after the
///   first change of a large set, the next set's buffers (its listing, the parsed file or reply, the
///   notification) came from the heap and stayed there once freed. Fixed, they go back to the system: 38.6 ->
///   28.0 MiB at the moment the first subscriber is told of the change, 26.7 MiB once all are.
public enum MallocTuning {
    static let arenas: Int32 = 2
    static let mmapThreshold: Int32 = 256 * 1024

    /// What `apply` sets, given the environment: nothing the operator set in it.
    struct Settings: Equatable, Sendable {
        var arenas: Int32?
        var mmapThreshold: Int32?
    }

    static func settings(environment: [String: String]) -> Settings {
        let tunables = environment["GLIBC_TUNABLES"] ?? ""
        return Settings(
            arenas: environment["MALLOC_ARENA_MAX"] != nil || tunables.contains("glibc.malloc.arena_max")
                ? nil : arenas,
            mmapThreshold: environment["MALLOC_MMAP_THRESHOLD_"] != nil
                || tunables.contains("glibc.malloc.mmap_threshold") ? nil : mmapThreshold)
    }

    /// Applies the settings; call before the daemon starts its threads.
    public static func apply(environment: [String: String]) {
        let chosen = settings(environment: environment)
        if let arenas = chosen.arenas { ProcessControl.limitMallocArenas(to: arenas) }
        if let threshold = chosen.mmapThreshold { ProcessControl.setMallocMmapThreshold(threshold) }
    }
}
