import UnixIO

/// Tells when the wall clock is set (NTP correcting a clock that booted wrong, an operator, `date -s`) and when
/// the machine resumes from suspend, without polling.
///
/// A `TimerFD` on `CLOCK_REALTIME`, armed far ahead with `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET`: its read
/// fails with `ECANCELED` as soon as the clock is set, and the kernel treats a resume the same way. The timer is
/// armed again after every change. The `DescriptorWatcher` waits on it; nothing here polls.
///
/// The timer is made at start, before the daemon says it is ready, so that its descriptor is part of the
/// daemon's steady set from the first moment; `run` closes it when it returns.
final class ClockChangeWatcher: Service {
    /// How far ahead the timer is armed; should the wall clock ever reach it, it is armed again.
    static let horizon = 10 * 365 * 86400

    private let timer: TimerFD
    private let onChange: @Sendable () async -> Void

    /// Makes and arms the timer, for `run()` to call `onChange` after each change; throws when it cannot (a
    /// kernel without `timerfd`).
    init(onChange: @escaping @Sendable () async -> Void = {}) throws(SystemError) {
        self.timer = try Self.armedTimer()
        self.onChange = onChange
    }

    /// A new timer, armed; closed again when arming fails.
    static func armedTimer() throws(SystemError) -> TimerFD {
        let timer = try TimerFD()
        do {
            try arm(timer)
        } catch {
            timer.close()
            throw error
        }
        return timer
    }

    /// Calls the `onChange` given at init after each change, one at a time, until cancelled. The timer is
    /// watched by the `DescriptorWatcher`; without one (no thread could be made) the watcher stays deaf, as
    /// without `timerfd`.
    func run() async {
        let timer = self.timer
        let (changes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let watch = try? DescriptorWatcher.shared?.watch(
            timer.descriptor, onReadable: { if Self.consume(timer) { continuation.yield() } },
            onCancel: { timer.close() })
        guard let watch else {
            timer.close()
            return await Self.waitForCancellation()
        }
        continuation.onTermination = { _ in watch.cancel() }
        for await _ in changes {
            await onChange()
        }
        watch.cancel()
    }

    /// Arms the timer `horizon` ahead of the wall clock, cancelled when the clock is set.
    static func arm(_ timer: TimerFD) throws(SystemError) {
        try timer.armUntilClockChange(secondsAhead: horizon)
    }

    /// Reads what the timer reports: true when the clock was set. Re-arms it after a change or an expiry.
    static func consume(_ timer: TimerFD) -> Bool {
        let reading = timer.read()
        guard reading != .nothing else { return false }
        // A failed re-arm leaves the watcher deaf to later changes, not wrong: nothing else depends on it.
        try? arm(timer)
        return reading == .clockChanged
    }
}
