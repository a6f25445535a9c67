import Dispatch
import UnixIO

/// Delivers POSIX signals as an async sequence instead of running code inside a signal handler.
///
/// A plain handler writes the signal number to a pipe (`SignalPipe`), and a dispatch read source on the other end
/// yields it.
/// Not a Dispatch signal source: on Linux those rely on the signal being blocked in every thread, and a signal
/// that the kernel hands to a thread of the runtime's that does not block it was sometimes lost, so SIGTERM did
/// not stop the daemon (about one start in 30 in the integration tests).
enum SignalWatcher {
    /// Catches `signals` and yields each one as it arrives, until the stream is dropped.
    ///
    /// Throws when the pipe cannot be made (no descriptor left): the daemon then cannot be stopped gracefully,
    /// so it does not start, rather than start with a shutdown trigger that never fires or fires at once.
    static func signals(_ signals: [Int32]) throws(SystemError) -> AsyncStream<Int32> {
        let pipe = try SignalPipe(catching: signals)
        return AsyncStream(bufferingPolicy: .bufferingNewest(8)) { continuation in
            let source = DispatchSource.makeReadSource(
                fileDescriptor: pipe.readDescriptor,
                queue: DispatchQueue(label: "pwflagsd.signals")
            )
            source.setEventHandler {
                for number in pipe.readSignals() { continuation.yield(number) }
            }
            source.resume()
            // The pipe stays open for the process's life: a handler may still run after the stream ends.
            let box = DispatchSourceBox(source)
            continuation.onTermination = { _ in box.cancel() }
        }
    }
}
