import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps the API token out of core files, however the daemon is started.
///
/// The units set `LimitCORE=0`; this covers a daemon started by hand or by another supervisor, and a kernel
/// whose `core_pattern` pipes to a handler that ignores the limit.
public enum CoreDumps {
    /// Sets the core file limit to zero and makes the process not dumpable; returns what failed, if anything.
    ///
    /// Not dumpable also means that only a process with `CAP_SYS_PTRACE` may read the daemon's memory and its
    /// `/proc/PID` files beyond the public ones (`environ`, `fd`, `mem`): other processes of its own user
    /// cannot attach to it.
    public static func disable() -> [String] {
        var problems: [String] = []
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        if setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none) != 0 {
            problems.append("setrlimit(RLIMIT_CORE): \(String(cString: strerror(errno)))")
        }
        do {
            try ProcessControl.setDumpable(false)
        } catch {
            problems.append(error.description)
        }
        return problems
    }
}
