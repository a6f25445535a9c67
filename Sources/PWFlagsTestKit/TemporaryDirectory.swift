import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory under /tmp with a short path (sockets need paths under 108 bytes), removed on `remove()`.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init(prefix: String = "pwf") throws {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let result = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw CocoaError(.fileWriteUnknown)
        }
        path = String(cString: result)
    }

    /// The path of `name` inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Writes `text` to `name` in one step (write to a temporary name, then rename), as an editor would.
    public func write(_ name: String, _ text: String) throws {
        let temporary = file(".\(name).tmp")
        try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, file(name)) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
