import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// A non-blocking timerfd on the wall clock that tells when the clock is set: armed with
/// `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET`, its read fails with `ECANCELED` as soon as the clock is set (the
/// kernel treats a resume from suspend the same way). A handle like a descriptor: `close()` ends it.
public struct TimerFD: Sendable {
    /// The timer's descriptor, for a dispatch source or epoll.
    public let descriptor: Int32

    /// What a read of the timer found.
    public enum Reading: Sendable, Equatable {
        /// The wall clock was set since the timer was armed; the timer is disarmed until armed again.
        case clockChanged
        /// The timer reached its time.
        case expired
        /// Nothing yet.
        case nothing
    }

    /// Creates a non-blocking, close-on-exec timer on `CLOCK_REALTIME`.
    public init() throws(SystemError) {
        descriptor = try syscall("timerfd_create") {
            timerfd_create(CLOCK_REALTIME, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        }
    }

    /// Arms the timer `seconds` ahead of the wall clock, cancelled when the clock is set.
    public func armUntilClockChange(secondsAhead seconds: Int) throws(SystemError) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var spec = itimerspec()
        spec.it_value.tv_sec = now.tv_sec + seconds
        try syscall("timerfd_settime") {
            timerfd_settime(descriptor, Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET), &spec, nil)
        }
    }

    /// Reads what the timer reports, without waiting.
    public func read() -> Reading {
        var expirations: UInt64 = 0
        do {
            let count = try syscall("read") { Glibc.read(descriptor, &expirations, MemoryLayout<UInt64>.size) }
            return count == MemoryLayout<UInt64>.size ? .expired : .nothing
        } catch {
            return error.errno == ECANCELED ? .clockChanged : .nothing
        }
    }

    /// Closes the timer.
    public func close() {
        _ = Glibc.close(descriptor)
    }
}
