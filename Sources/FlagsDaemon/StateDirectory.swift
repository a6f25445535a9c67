import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's files in `StateDirectory`: small values and the flag cache, each written atomically.
public struct StateDirectory: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// Creates the directory (mode 0700) when it is missing; returns why it cannot, if it cannot.
    public func prepare() -> String? {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            return isDirectory.boolValue ? nil : "\(path) exists and is not a directory"
        }
        do {
            try FileManager.default.createDirectory(
                atPath: path,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
            return nil
        } catch {
            return "cannot create \(path): \(error.localizedDescription)"
        }
    }

    /// The full path of a file in the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Reads a whole file; nil when it is missing or unreadable.
    public func read(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: file(name)).map { [UInt8]($0) }
    }

    /// Writes a file so that a crash at any moment leaves the old or the new content, never a mix:
    /// a temporary file, fsync, rename over the old one, fsync of the directory.
    public func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(StateDirectoryError) {
        let target = file(name)
        let (fd, temporary) = try createTemporary(for: name)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                let error = StateDirectoryError(operation: "write \(temporary)", errno: errno)
                close(fd)
                unlink(temporary)
                throw error
            }
            offset += written
        }
        guard fsync(fd) == 0 else {
            let error = StateDirectoryError(operation: "fsync \(temporary)", errno: errno)
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, target) == 0 else {
            let error = StateDirectoryError(operation: "rename to \(target)", errno: errno)
            unlink(temporary)
            throw error
        }
        let directory = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    /// Creates a new temporary file for `name`, never opening one that exists: `O_EXCL | O_NOFOLLOW`, so that a
    /// symlink planted at the name cannot make the write land elsewhere. A name that is taken (a planted link, a
    /// file left by an earlier process with the same id, a concurrent write of the same file) is skipped for the
    /// next: `.NAME.tmp.PID`, then `.NAME.1.tmp.PID`, `.NAME.2.tmp.PID`, and so on.
    private func createTemporary(for name: String) throws(StateDirectoryError) -> (Int32, String) {
        let pid = getpid()
        for attempt in 0..<Self.temporaryAttempts {
            let temporary = file(attempt == 0 ? ".\(name).tmp.\(pid)" : ".\(name).\(attempt).tmp.\(pid)")
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 { return (fd, temporary) }
            if errno == EINTR || errno == EEXIST { continue }
            throw StateDirectoryError(operation: "open \(temporary)", errno: errno)
        }
        throw StateDirectoryError(operation: "create a temporary file for \(file(name))", errno: EEXIST)
    }

    /// How many temporary names one write tries before it gives up.
    static let temporaryAttempts = 64

    /// Removes the temporary files of `writeAtomically` whose writer is gone (a daemon killed mid-write), so that
    /// they do not pile up across crashes; returns their names. A live writer's file stays.
    public func removeStaleTemporaries() -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        var removed: [String] = []
        for name in names where name.hasPrefix(".") {
            guard let marker = name.range(of: ".tmp.", options: .backwards),
                let pid = pid_t(name[marker.upperBound...]), pid > 0
            else { continue }
            // kill(pid, 0) fails with ESRCH only when no such process exists.
            guard pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            if unlink(file(name)) == 0 { removed.append(name) }
        }
        return removed.sorted()
    }

    /// Removes a file; a missing file is fine.
    public func remove(_ name: String) throws(StateDirectoryError) {
        guard unlink(file(name)) == 0 || errno == ENOENT else {
            throw StateDirectoryError(operation: "remove \(file(name))", errno: errno)
        }
    }
}

/// A failed write in the state directory, for the log and `status`.
public struct StateDirectoryError: Error, Sendable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32

    public var description: String { "\(operation): \(String(cString: strerror(errno)))" }
}
