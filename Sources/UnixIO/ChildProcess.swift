#if canImport(Glibc)
    import Glibc
#endif

/// Runs a program to its end: `posix_spawn`, then `waitpid`, with the signal state a program expects.
///
/// The caller may ignore SIGPIPE (the CLI does) and block signals on its thread; an ignored disposition and the
/// mask would pass to the child through exec. The child gets every signal at its default and none blocked, so a
/// shell pipeline in it behaves as it would from a terminal.
public enum ChildProcess {
    /// How a child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        public var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .signalled(let number): "was killed by signal \(number)"
            }
        }
    }

    /// Starts `arguments[0]` (a path) with `arguments` and `environment` (`NAME=value` each), inheriting the
    /// standard descriptors, and waits for it to end.
    public static func run(_ arguments: [String], environment: [String]) throws(SystemError) -> Termination {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigfillset(&defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], nil, &attributes, argv, envp)
        guard spawned == 0 else { throw SystemError("posix_spawn(\(arguments[0]))", errno: spawned) }
        var status: Int32 = 0
        _ = try syscall("waitpid") { waitpid(pid, &status, 0) }
        // The W* macros of <sys/wait.h> are not imported: their bit layout, spelled out.
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }
}
