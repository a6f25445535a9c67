#if canImport(Glibc)
    import Glibc
#endif

/// Whether a directory or file the daemon takes state from can have been planted or changed by another user, as
/// sshd's `StrictModes` judges a home directory: it must belong to root or to the daemon's user, and neither its
/// group nor others may write it.
///
/// A daemon running as root that adopted a state directory another user made first (under `/tmp`, say) would
/// serve that user's overrides to every client and send its API token to the address a planted `base-url` names.
public enum TrustedOwner {
    /// Why `info` (a `stat` of the directory or file) cannot be trusted, or nil when it can.
    static func problem(_ info: stat) -> String? {
        problem(owner: info.st_uid, mode: info.st_mode)
    }

    /// Why a file of `owner` with `mode` cannot be trusted by a process of `euid` (nil: the daemon's), or nil.
    public static func problem(owner: UInt32, mode: UInt32, euid: UInt32? = nil) -> String? {
        let euid = euid ?? geteuid()
        if owner != 0, owner != euid {
            return "owned by uid \(owner), neither root nor the daemon's user (uid \(euid))"
        }
        if mode & (S_IWGRP | S_IWOTH) != 0 {
            return "writable by its group or others (mode 0\(String(mode & 0o7777, radix: 8)))"
        }
        return nil
    }

    /// Why the open descriptor `fd` cannot be trusted, as `problem(_:)`; a failed `fstat` is a reason too.
    public static func problem(descriptor fd: Int32) -> String? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return "cannot be examined (fstat: errno \(errno))" }
        return problem(info)
    }

    /// Why a directory on the way to `path` (each of its parents) could let another user replace what `path`
    /// names, or nil: each must belong to root or the daemon's user, and one its group or others may write must
    /// have the sticky bit (as `/tmp`), so that no one else can rename or remove entries they do not own.
    public static func parentsProblem(of path: String) -> String? {
        let euid = geteuid()
        var parents = ["/"]
        var walked = ""
        for name in SafeDirectory.components(of: path).dropLast() {
            walked += "/" + name
            parents.append(walked)
        }
        if !path.hasPrefix("/") { parents = parents.dropFirst().map { "." + $0 } + ["."] }
        for parent in parents {
            var info = stat()
            guard stat(parent, &info) == 0 else { continue }
            if info.st_uid != 0, info.st_uid != euid {
                return "\(parent) is owned by uid \(info.st_uid), neither root nor the daemon's user (uid \(euid))"
            }
            if info.st_mode & (S_IWGRP | S_IWOTH) != 0, info.st_mode & S_ISVTX == 0 {
                return "\(parent) is writable by its group or others without the sticky bit"
            }
        }
        return nil
    }
}
