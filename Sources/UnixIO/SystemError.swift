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

/// Runs a system call, retrying while it is interrupted by a signal, and throws an error naming the call.
///
/// Every blocking call in the project goes through here, so that `EINTR` is handled in exactly one place.
@discardableResult
public func syscall<Result: FixedWidthInteger & SignedInteger>(
    _ call: String,
    _ body: () -> Result
) throws(SystemError) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let error = Glibc.errno
        if error == EINTR { continue }
        throw SystemError(call, errno: error)
    }
}
