import FoundationEssentials
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's files in `StateDirectory`: small values and the flag cache, each written atomically.
struct StateDirectory: Sendable {
    let path: String

    init(path: String) {
        self.path = path
    }

    /// Why the directory cannot be used.
    enum Problem: Error, Equatable {
        /// It cannot be made or opened: nothing survives a restart, but the daemon serves.
        case unusable(String)
        /// Another user could have made it or can write in it (`TrustedOwner`): nothing in it may be believed.
        case untrusted(String)
    }

    /// Creates the directory (mode 0700) when it is missing, and any missing parent (0755), never through a link
    /// another user could have planted (`SafeDirectory`); returns why it cannot, if it cannot, and refuses a
    /// directory that neither root nor the daemon's user owns, or that its group or others may write.
    func prepare() -> Problem? {
        let fd: Int32
        do {
            fd = try SafeDirectory.open(path, creatingMode: 0o700)
        } catch  where error.errno == ENOTDIR {
            return .unusable("\(path) exists and is not a directory")
        } catch {
            return .unusable("cannot create \(path): \(error)")
        }
        defer { close(fd) }
        if let problem = TrustedOwner.problem(descriptor: fd) { return .untrusted("\(path) is \(problem)") }
        if let problem = TrustedOwner.parentsProblem(of: path) { return .untrusted(problem) }
        return nil
    }

    /// The full path of a file in the directory.
    func file(_ name: String) -> String { path + "/" + name }

    /// The most any file of the directory may hold when it is read: the flag cache holds at most an upstream
    /// reply (8 MiB) in its envelope.
    static let maximumFileBytes = 16 << 20

    /// Reads a whole file; nil when it is missing, unreadable, not a regular file, over `maximumFileBytes`, or
    /// owned by another user or writable by others (`TrustedOwner`).
    func read(_ name: String) -> [UInt8]? {
        try? reading(name, limit: Self.maximumFileBytes).get()
    }

    /// Reads a regular file of at most `limit` bytes; nil when it is missing, the reason when it is refused (not a
    /// regular file, too large, or one another user could have planted or changed).
    func reading(_ name: String, limit: Int) -> Result<[UInt8]?, SystemError> {
        do {
            return .success(try FileReading.regularFile(ofPath: file(name), limit: limit, trustedOwner: true))
        } catch {
            return error.errno == ENOENT ? .success(nil) : .failure(error)
        }
    }

    /// Writes a file so that a crash at any moment leaves the old or the new content, never a mix
    /// (`AtomicFile`: a new temporary file that no planted symlink can redirect, fsync, rename over the old one,
    /// fsync of the directory).
    func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(StateDirectoryError) {
        do {
            try AtomicFile.write(bytes, to: name, in: path)
        } catch {
            throw StateDirectoryError(operation: error.call, errno: error.errno)
        }
    }

    /// Removes the temporary files of `writeAtomically` whose writer is gone (a daemon killed mid-write), so that
    /// they do not pile up across crashes; returns their names. A live writer's file stays.
    func removeStaleTemporaries() -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        var removed: [String] = []
        for name in names where AtomicFile.isStaleTemporary(name) {
            if (try? AtomicFile.remove(name, in: path)) != nil { removed.append(name) }
        }
        return removed.sorted()
    }

    /// Removes a file; a missing file is fine.
    func remove(_ name: String) throws(StateDirectoryError) {
        do {
            try AtomicFile.remove(name, in: path)
        } catch {
            throw StateDirectoryError(operation: error.call, errno: error.errno)
        }
    }
}

/// A failed write in the state directory, for the log and `status`.
struct StateDirectoryError: Error, Sendable, CustomStringConvertible {
    var operation: String
    var errno: Int32

    var description: String { "\(operation): \(String(cString: strerror(errno)))" }
}
