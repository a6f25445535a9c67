#if canImport(Glibc)
    import Glibc
#endif

/// The process's limit on open descriptors (`RLIMIT_NOFILE`), which the daemons it starts inherit.
public enum FileLimit {
    /// Raises the soft limit to `wanted` (at most the hard limit); returns the soft limit now in force.
    @discardableResult
    public static func raise(to wanted: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < rlim_t(wanted) {
            limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return Int(limit.rlim_cur)
    }
}
