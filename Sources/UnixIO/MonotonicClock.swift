#if canImport(Glibc)
    import Glibc
#endif

/// The monotonic clock (`CLOCK_MONOTONIC`: never set, stops during suspend), read without Foundation, for
/// intervals inside one run: the server loop's timeouts, the CLI's waits, systemd's `MONOTONIC_USEC`.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary fixed point (the boot, on Linux).
    public static func nanoseconds() -> UInt64 {
        reading(CLOCK_MONOTONIC)
    }

    /// Seconds on the boot clock (`CLOCK_BOOTTIME`: like the monotonic clock, but it keeps counting through
    /// suspend), for intervals that must include the time a device slept: refresh timers, the age of flags.
    public static func bootSeconds() -> Double {
        Double(reading(CLOCK_BOOTTIME)) / 1e9
    }

    /// CPU nanoseconds the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`, which never goes back either),
    /// for the benchmark's cost per call.
    public static func threadCPUNanoseconds() -> UInt64 {
        reading(CLOCK_THREAD_CPUTIME_ID)
    }

    /// Nanoseconds since the Unix epoch on the wall clock (`CLOCK_REALTIME`, which can be set and jump), for
    /// timestamps that leave the device, such as OpenTelemetry's; never for intervals.
    public static func wallNanoseconds() -> UInt64 {
        reading(CLOCK_REALTIME)
    }

    /// Seconds since the same point, for arithmetic on `Double`s.
    public static func seconds() -> Double {
        Double(nanoseconds()) / 1e9
    }

    private static func reading(_ clock: clockid_t) -> UInt64 {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
