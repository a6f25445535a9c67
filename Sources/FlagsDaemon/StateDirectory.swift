import FoundationEssentials
import UnixIO

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
        var info = stat()
        if stat(path, &info) == 0 {
            return info.st_mode & S_IFMT == S_IFDIR ? nil : "\(path) exists and is not a directory"
        }
        do {
            try FileManager.default.createDirectory(
                atPath: path,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
            return nil
        } catch {
            return "cannot create \(path): \(error)"
        }
    }

    /// The full path of a file in the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Reads a whole file; nil when it is missing or unreadable.
    public func read(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: file(name)).map { [UInt8]($0) }
    }

    /// Writes a file so that a crash at any moment leaves the old or the new content, never a mix
    /// (`AtomicFile`: a new temporary file that no planted symlink can redirect, fsync, rename over the old one,
    /// fsync of the directory).
    public func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(StateDirectoryError) {
        do {
            try AtomicFile.write(bytes, to: name, in: path)
        } catch {
            throw StateDirectoryError(operation: error.call, errno: error.errno)
        }
    }

    /// Removes the temporary files of `writeAtomically` whose writer is gone (a daemon killed mid-write), so that
    /// they do not pile up across crashes; returns their names. A live writer's file stays.
    public func removeStaleTemporaries() -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        var removed: [String] = []
        for name in names where AtomicFile.isStaleTemporary(name) {
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
