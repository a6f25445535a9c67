#if canImport(Glibc)
    import Glibc
#endif

/// The write end of the pipe the signal handler writes to; set before any handler is installed.
nonisolated(unsafe) private var signalPipeWriteFD: Int32 = -1

/// POSIX signals turned into bytes on a pipe (the self-pipe trick), so that no code of ours runs inside a signal
/// handler: the handler writes the signal's number, and whoever watches `readDescriptor` reads it.
///
/// One per process: the handler finds the pipe through a global. The pipe stays open for the process's life, since
/// a handler may run at any moment.
public struct SignalPipe: Sendable {
    /// The read end, non-blocking, for a dispatch source or epoll.
    public let readDescriptor: Int32

    /// Makes the pipe and routes `signals` into it.
    public init(catching signals: [Int32]) throws(SystemError) {
        var fds: [Int32] = [-1, -1]
        try syscall("pipe") { pipe(&fds) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        readDescriptor = fds[0]
        signalPipeWriteFD = fds[1]
        for number in signals {
            // Only async-signal-safe work here: one write(2) of one byte.
            _ = signal(number) { received in
                var byte = UInt8(truncatingIfNeeded: received)
                _ = write(signalPipeWriteFD, &byte, 1)
            }
        }
    }

    /// The signals that arrived since the last call, in order; never waits.
    public func readSignals() -> [Int32] {
        var buffer = [UInt8](repeating: 0, count: 64)
        var signals: [Int32] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                (try? syscall("read") { read(readDescriptor, raw.baseAddress, raw.count) }) ?? -1
            }
            guard count > 0 else { return signals }
            signals += buffer[0..<count].map { Int32($0) }
        }
    }
}
