#if canImport(Glibc)
    import Glibc
#endif

/// A failed system call: which call, and the `errno` it left.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    public var call: String
    public var errno: Int32

    public init(_ call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// The C library's text for the error number.
    public var reason: String { String(cString: strerror(errno)) }

    public var description: String { "\(call): \(reason)" }
}
