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

    /// Creates the directory (mode 0700) when it is missing, and any missing parent (0755), never through a link
    /// another user could have planted (`SafeDirectory`); returns why it cannot, if it cannot.
    public func prepare() -> String? {
        do {
            close(try SafeDirectory.open(path, creatingMode: 0o700))
            return nil
        } catch  where error.errno == ENOTDIR {
            return "\(path) exists and is not a directory"
        } catch {
            return "cannot create \(path): \(error)"
        }
    }

    /// The full path of a file in the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    /// The most any file of the directory may hold when it is read: the flag cache holds at most an upstream
    /// reply (8 MiB) in its envelope.
    public static let maximumFileBytes = 16 << 20

    /// Reads a whole file; nil when it is missing, unreadable, not a regular file or over `maximumFileBytes`.
    public func read(_ name: String) -> [UInt8]? {
        try? reading(name, limit: Self.maximumFileBytes).get()
    }

    /// Reads a regular file of at most `limit` bytes; nil when it is missing, the reason when it is refused.
    func reading(_ name: String, limit: Int) -> Result<[UInt8]?, SystemError> {
        do {
            return .success(try FileReading.regularFile(ofPath: file(name), limit: limit))
        } catch {
            return error.errno == ENOENT ? .success(nil) : .failure(error)
        }
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
            if (try? AtomicFile.remove(name, in: path)) != nil { removed.append(name) }
        }
        return removed.sorted()
    }

    /// Removes a file; a missing file is fine.
    public func remove(_ name: String) throws(StateDirectoryError) {
        do {
            try AtomicFile.remove(name, in: path)
        } catch {
            throw StateDirectoryError(operation: error.call, errno: error.errno)
        }
    }
}

/// A failed write in the state directory, for the log and `status`.
public struct StateDirectoryError: Error, Sendable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32

    public var description: String { "\(operation): \(String(cString: strerror(errno)))" }
}
