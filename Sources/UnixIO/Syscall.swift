#if canImport(Glibc)
    import Glibc
#endif

/// Runs a system call, retrying while it is interrupted by a signal, and throws an error naming the call.
///
/// Every call in the daemon, the CLI and the bench that can fail with `EINTR` goes through here (or through a
/// wrapper built on it, such as `Descriptor.writeAll`), so that `EINTR` is handled in exactly one place. Waits with a timeout (`Epoll.wait`, `Descriptor.waitReadable`) are the exception that proves it:
/// retrying them would restart the full timeout, so they report an interruption as "nothing yet" and their
/// callers, which loop on a deadline anyway, compute the time left.
@discardableResult
public func syscall<Result: FixedWidthInteger & SignedInteger>(
    _ call: @autoclosure () -> String,
    _ body: () -> Result
) throws(SystemError) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let error = Glibc.errno
        if error == EINTR { continue }
        throw SystemError(call(), errno: error)
    }
}
