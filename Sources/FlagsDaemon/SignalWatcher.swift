import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// The write end of the self-pipe that the signal handler writes to; set before any handler is installed.
nonisolated(unsafe) private var signalPipeWriteFD: Int32 = -1

/// Delivers POSIX signals as an async sequence instead of running code inside a signal handler.
///
/// A plain handler writes the signal number to a pipe, and a dispatch read source on the other end yields it.
/// Not a Dispatch signal source: on Linux those rely on the signal being blocked in every thread, and a signal
/// that the kernel hands to a thread of the runtime's that does not block it was sometimes lost, so SIGTERM did
/// not stop the daemon (about one start in 30 in the integration tests).
enum SignalWatcher {
    /// Catches `signals` and yields each one as it arrives, until the stream is dropped.
    static func signals(_ signals: [Int32]) -> AsyncStream<Int32> {
        AsyncStream(bufferingPolicy: .bufferingNewest(8)) { continuation in
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else {
                // Without the pipe the default actions stay: SIGTERM and SIGINT still end the process.
                continuation.finish()
                return
            }
            let readFD = fds[0]
            for fd in fds {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            }
            signalPipeWriteFD = fds[1]
            for number in signals {
                // Only async-signal-safe work here: one write(2) of one byte.
                _ = signal(number) { received in
                    var byte = UInt8(truncatingIfNeeded: received)
                    _ = write(signalPipeWriteFD, &byte, 1)
                }
            }
            let source = DispatchSource.makeReadSource(
                fileDescriptor: readFD,
                queue: DispatchQueue(label: "pwflagsd.signals")
            )
            source.setEventHandler {
                var buffer = [UInt8](repeating: 0, count: 64)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(readFD, $0.baseAddress, $0.count) }
                    guard count > 0 else { break }
                    for byte in buffer[0..<count] { continuation.yield(Int32(byte)) }
                }
            }
            source.resume()
            // The pipe stays open for the process's life: a handler may still run after the stream ends.
            let box = SourceBox(source)
            continuation.onTermination = { _ in box.cancel() }
        }
    }
}

/// Keeps the dispatch source alive for the stream's lifetime.
// @unchecked: dispatch sources may be cancelled from any thread.
private final class SourceBox: @unchecked Sendable {
    private let source: any DispatchSourceRead

    init(_ source: any DispatchSourceRead) {
        self.source = source
    }

    func cancel() {
        source.cancel()
    }
}
