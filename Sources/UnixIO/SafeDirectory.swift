#if canImport(Glibc)
    import Glibc
#endif

/// Opens a directory the daemon writes in, one path component at a time, following only symlinks that no other
/// user could have planted.
///
/// A path such as `/shared/metrics/pwflagsd.prom` under a world-writable directory would let another user swap
/// `metrics` for a link to a directory only root may write, and a daemon running as root would then write there.
/// So every component is opened with `openat(…, O_NOFOLLOW | O_DIRECTORY)` from the one before it, and a symlink
/// met on the way is followed only when it cannot have been planted or replaced by anyone else: it belongs to
/// root or to the daemon's user, and so does the directory holding it, which no one else may write unless its
/// sticky bit keeps others from replacing entries they do not own (as `/tmp`'s does). A real directory is
/// always entered: once it is open, renaming or replacing it changes nothing for the open descriptor.
public enum SafeDirectory {
    /// The most symlinks one path may go through, as the kernel's own limit.
    public static let maximumLinks = 40

    /// An open descriptor (`O_DIRECTORY`, close-on-exec) of `path`; the caller closes it. Throws with the call
    /// `refuse symlink PATH` (errno `ELOOP`) for a link another user could have planted. With `creatingMode`,
    /// missing directories are made on the way (`mkdirat`, the last one with that mode, the others 0755).
    public static func open(_ path: String, creatingMode: UInt32? = nil) throws(SystemError) -> Int32 {
        var pending = components(of: path)
        var current = try syscall("open \(path.hasPrefix("/") ? "/" : ".")") {
            Glibc.open(path.hasPrefix("/") ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        var walked = path.hasPrefix("/") ? "" : "."
        var links = 0
        while !pending.isEmpty {
            let name = pending.removeFirst()
            var link = stat()
            if name != "..", fstatat(current, name, &link, AT_SYMLINK_NOFOLLOW) == 0,
                link.st_mode & S_IFMT == S_IFLNK
            {
                links += 1
                guard links <= maximumLinks, isTrusted(link: link, in: current),
                    let target = readLink(name, in: current)
                else {
                    close(current)
                    throw SystemError("refuse symlink \(walked)/\(name)", errno: ELOOP)
                }
                pending = components(of: target) + pending
                if target.hasPrefix("/") {
                    let root = Glibc.open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                    close(current)
                    guard root >= 0 else { throw SystemError("open /", errno: errno) }
                    current = root
                    walked = ""
                }
                continue
            }
            let next: Int32
            do throws(SystemError) {
                if let creatingMode, name != "..",
                    mkdirat(current, name, mode_t(pending.isEmpty ? creatingMode : 0o755)) != 0,
                    errno != EEXIST
                {
                    throw SystemError("mkdir \(walked)/\(name)", errno: errno)
                }
                next = try syscall("open \(walked)/\(name)") {
                    openat(current, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                }
            } catch {
                close(current)
                throw error
            }
            close(current)
            current = next
            walked += "/" + name
        }
        return current
    }

    static func components(of path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init).filter { $0 != "." }
    }

    /// Whether no one but root and the daemon's user can have made or replaced the link.
    static func isTrusted(link: stat, in directory: Int32) -> Bool {
        let me = geteuid()
        guard link.st_uid == 0 || link.st_uid == me else { return false }
        var holder = stat()
        guard fstat(directory, &holder) == 0, holder.st_uid == 0 || holder.st_uid == me else { return false }
        let othersWrite = holder.st_mode & (S_IWGRP | S_IWOTH) != 0
        return !othersWrite || holder.st_mode & S_ISVTX != 0
    }

    private static func readLink(_ name: String, in directory: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlinkat(directory, name, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
