import CLinux
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking timerfd on the boot clock (`CLOCK_BOOTTIME`), armed at absolute times: the pool's one timer.
///
/// Its thread blocks in `wait()`; other threads arm it meanwhile (`timerfd_settime` on a timer a read is
/// blocked on changes when that read returns). Disarmed, a read blocks for good: an idle pool's timer thread is
/// never woken. A handle like a descriptor: `close()` ends it.
struct BootTimer: Sendable {
    let descriptor: Int32

    init() throws(SystemError) {
        descriptor = try syscall("timerfd_create") { timerfd_create(CLOCK_BOOTTIME, Int32(TFD_CLOEXEC)) }
    }

    /// Arms the timer to expire when the boot clock reads `nanoseconds` (at once when that has passed).
    func arm(at nanoseconds: Int64) {
        var spec = itimerspec()
        // An it_value of zero would disarm the timer: a time already past is one nanosecond after boot.
        let time = max(nanoseconds, 1)
        spec.it_value.tv_sec = Int(time / 1_000_000_000)
        spec.it_value.tv_nsec = Int(time % 1_000_000_000)
        set(spec)
    }

    /// Disarms the timer: a `wait()` blocks until it is armed again.
    func disarm() {
        set(itimerspec())
    }

    /// Blocks until the timer expires.
    func wait() {
        var expirations: UInt64 = 0
        do {
            try syscall("read") { Glibc.read(descriptor, &expirations, MemoryLayout<UInt64>.size) }
        } catch {
            // Only on a descriptor that is not this timer any more, which the pool never closes; returning would
            // make its thread spin.
            fatalError("the executor's timer: \(error)")
        }
    }

    /// Closes the timer's descriptor.
    func close() {
        _ = Glibc.close(descriptor)
    }

    private func set(_ spec: itimerspec) {
        var spec = spec
        // Fails only with arguments out of range, which `arm` never makes.
        _ = timerfd_settime(descriptor, Int32(TFD_TIMER_ABSTIME), &spec, nil)
    }
}
