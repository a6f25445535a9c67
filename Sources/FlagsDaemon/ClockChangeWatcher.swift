import CLinux
import Dispatch
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Tells when the wall clock is set (NTP correcting a clock that booted wrong, an operator, `date -s`) and when
/// the machine resumes from suspend, without polling.
///
/// A `timerfd` on `CLOCK_REALTIME`, armed far ahead with `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET`: its read
/// fails with `ECANCELED` as soon as the clock is set, and the kernel treats a resume the same way. The timer is
/// armed again after every change. All of its system calls are in this file.
///
/// The timer is made at start, before the daemon says it is ready, so that its descriptor is part of the
/// daemon's steady set from the first moment; `run` closes it when it returns.
final class ClockChangeWatcher: Sendable {
    /// How far ahead the timer is armed; should the wall clock ever reach it, it is armed again.
    static let horizon = 10 * 365 * 86400

    private let fd: Int32

    /// Makes and arms the timer; throws when it cannot (a kernel without `timerfd`).
    init() throws(SystemError) {
        let fd = try syscall("timerfd_create") { timerfd_create(CLOCK_REALTIME, Int32(TFD_CLOEXEC | TFD_NONBLOCK)) }
        do {
            try Self.arm(fd)
        } catch {
            close(fd)
            throw error
        }
        self.fd = fd
    }

    /// Calls `onChange` after each change, one at a time, until cancelled.
    func run(onChange: @escaping @Sendable () async -> Void) async {
        let fd = self.fd
        let changes = AsyncStream<Void>(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let source = DispatchSource.makeReadSource(
                fileDescriptor: fd, queue: DispatchQueue(label: "pwflagsd.clock-changes"))
            source.setEventHandler {
                if Self.consume(fd) { continuation.yield() }
            }
            source.setCancelHandler { close(fd) }
            source.resume()
            let box = CancelBox(source)
            continuation.onTermination = { _ in box.cancel() }
        }
        for await _ in changes {
            await onChange()
        }
    }

    /// Arms the timer `horizon` ahead of the wall clock, cancelled when the clock is set.
    static func arm(_ fd: Int32) throws(SystemError) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var spec = itimerspec()
        spec.it_value.tv_sec = now.tv_sec + horizon
        try syscall("timerfd_settime") {
            timerfd_settime(fd, Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET), &spec, nil)
        }
    }

    /// Reads what the timer reports: true when the clock was set. Re-arms it after a change or an expiry.
    static func consume(_ fd: Int32) -> Bool {
        var expirations: UInt64 = 0
        let count = read(fd, &expirations, MemoryLayout<UInt64>.size)
        let changed = count < 0 && errno == ECANCELED
        guard changed || count == MemoryLayout<UInt64>.size else { return false }
        // A failed re-arm leaves the watcher deaf to later changes, not wrong: nothing else depends on it.
        try? arm(fd)
        return changed
    }
}

/// Keeps the dispatch source for the stream's lifetime.
// @unchecked: a dispatch source may be cancelled from any thread.
private final class CancelBox: @unchecked Sendable {
    private let source: any DispatchSourceRead

    init(_ source: any DispatchSourceRead) {
        self.source = source
    }

    func cancel() {
        source.cancel()
    }
}
