#if canImport(Glibc)
    import Glibc
#endif

/// Writes that a crash at any moment leaves with the old content or the new, never a mix: a new temporary file
/// beside the target, fsync, rename over the target, fsync of the directory.
///
/// The temporary file is created with `O_EXCL | O_NOFOLLOW`, so a symlink planted at its name cannot make the
/// write land elsewhere. Its name carries the writer's process id, which lets `removeStaleTemporaries` tell the
/// leftovers of a writer killed mid-write from a live writer's file.
public enum AtomicFile {
    /// How many temporary names one write tries before it gives up.
    public static let temporaryAttempts = 64

    /// Replaces `directory/name` with `bytes` (mode 0600 unless `mode` says otherwise, whatever the umask: a file
    /// another user's reader needs, such as a metrics file, is 0644). The error's `call` says which step failed and on
    /// which path: `open …`, `write …`, `fsync …`, `rename to …`; the temporary file is removed after a failure.
    public static func write(
        _ bytes: [UInt8], to name: String, in directory: String, mode: UInt32 = 0o600
    ) throws(SystemError) {
        let target = directory + "/" + name
        // The directory is opened without following a link another user could plant (`SafeDirectory`); every
        // step below is relative to that descriptor, so the path is resolved once.
        let directoryFD = try SafeDirectory.open(directory)
        defer { close(directoryFD) }
        let (fd, temporary) = try createTemporary(for: name, in: directory, at: directoryFD)
        let temporaryPath = directory + "/" + temporary
        do {
            if mode != 0o600 { try syscall("fchmod \(temporaryPath)") { fchmod(fd, mode_t(mode)) } }
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { raw in
                    Result { () throws(SystemError) in
                        try syscall("write \(temporaryPath)") {
                            Glibc.write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset)
                        }
                    }
                }
                offset += try written.get()
            }
            try syscall("fsync \(temporaryPath)") { fsync(fd) }
        } catch {
            close(fd)
            unlinkat(directoryFD, temporary, 0)
            throw error
        }
        close(fd)
        guard renameat(directoryFD, temporary, directoryFD, name) == 0 else {
            let error = SystemError("rename to \(target)", errno: errno)
            unlinkat(directoryFD, temporary, 0)
            throw error
        }
        // The rename is durable once the directory is: best effort, the new content is already in place.
        _ = fsync(directoryFD)
    }

    /// Removes `directory/name`, the directory opened as `write` opens it; a missing file is fine.
    public static func remove(_ name: String, in directory: String) throws(SystemError) {
        let directoryFD = try SafeDirectory.open(directory)
        defer { close(directoryFD) }
        guard unlinkat(directoryFD, name, 0) == 0 || errno == ENOENT else {
            throw SystemError("remove \(directory)/\(name)", errno: errno)
        }
    }

    /// Renames `directory/name` to `directory/newName` (replacing a file of that name), the directory opened as
    /// `write` opens it, and makes the rename durable.
    public static func rename(_ name: String, to newName: String, in directory: String) throws(SystemError) {
        let directoryFD = try SafeDirectory.open(directory)
        defer { close(directoryFD) }
        guard renameat(directoryFD, name, directoryFD, newName) == 0 else {
            throw SystemError("rename \(directory)/\(name) to \(newName)", errno: errno)
        }
        _ = fsync(directoryFD)
    }

    /// Creates a new temporary file for `name`, never opening one that exists. A name that is taken (a planted
    /// link, a file left by an earlier process with the same id, a concurrent write of the same file) is skipped
    /// for the next: `.NAME.tmp.PID`, then `.NAME.1.tmp.PID`, `.NAME.2.tmp.PID`, and so on.
    private static func createTemporary(
        for name: String, in directory: String, at directoryFD: Int32
    ) throws(SystemError) -> (Int32, String) {
        let pid = getpid()
        for attempt in 0..<temporaryAttempts {
            let temporary = attempt == 0 ? ".\(name).tmp.\(pid)" : ".\(name).\(attempt).tmp.\(pid)"
            do {
                let fd = try syscall("open \(directory)/\(temporary)") {
                    openat(directoryFD, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
                }
                return (fd, temporary)
            } catch  where error.errno == EEXIST {
                continue
            }
        }
        throw SystemError("create a temporary file for \(directory)/\(name)", errno: EEXIST)
    }

    /// Whether `name` is a temporary file of `write` whose writer is gone (a process killed mid-write).
    public static func isStaleTemporary(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        let marker = Array(".tmp.".utf8)
        guard bytes.first == UInt8(ascii: "."), bytes.count > marker.count,
            let start = (0...(bytes.count - marker.count)).last(where: {
                bytes[$0..<($0 + marker.count)].elementsEqual(marker)
            }),
            let pid = pid_t(String(decoding: bytes[(start + marker.count)...], as: UTF8.self)), pid > 0
        else { return false }
        // kill(pid, 0) fails with ESRCH only when no such process exists.
        return pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
    }
}
