import UnixIO

/// Rings a `WakeSignal` at a time on the boot clock, for a loop that also wakes for other reasons.
///
/// A loop that waited on a sleep and a wake signal side by side ended its sleep by cancelling it at every wake.
/// A cancelled `Task.sleep` is not taken back from the executor: its timer entry (about 400 bytes) waits there
/// until the deadline it was set for, up to a minute later. So 2,500 `setAppState` calls a second, each waking
/// the refresher, kept a minute's worth of them, about 60 MB. Here one sleep outlives the wakes: setting the
/// same or a later time leaves it alone (it rings early, and the loop it wakes sets its time again), and only an
/// earlier time ends it. Those are rare and bounded by what the policy does (a backoff, a reload), not by calls.
final class Alarm: Sendable {
    private struct State {
        /// The time the loop wants to be woken at; nil for none.
        var wanted: Double?
        /// The time the sleep under way ends at; nil when none is under way.
        var sleepingUntil: Double?
    }

    private let clock: any DaemonClock
    private let rings: WakeSignal
    private let state = Locked(State())
    /// Ends the sleep under way: a time earlier than its end was set.
    private let earlier = WakeSignal()

    /// An alarm that signals `rings` when a time set comes.
    init(clock: any DaemonClock, rings: WakeSignal) {
        self.clock = clock
        self.rings = rings
    }

    /// Rings at `time` (boot clock), or never (nil). Never waits.
    func set(_ time: Double?) {
        let interrupt = state.withLock { state -> Bool in
            state.wanted = time
            guard let time, let sleepingUntil = state.sleepingUntil else { return time != nil }
            return time < sleepingUntil
        }
        if interrupt { earlier.signal() }
    }

    /// Sleeps toward the time set and rings when it comes, until cancelled.
    func run() async {
        let clock = self.clock
        let earlier = self.earlier
        while !Task.isCancelled {
            // Cleared before the time is read: a time set after the read signals again.
            earlier.clear()
            let target = state.withLock { state -> Double? in
                state.sleepingUntil = state.wanted
                return state.wanted
            }
            guard let target else {
                await earlier.wait()
                continue
            }
            let came = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    await clock.sleep(until: target)
                    return true
                }
                group.addTask {
                    await earlier.wait()
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            guard came, !Task.isCancelled else { continue }
            // Rung once: the loop sets its next time, and until then nothing rings again.
            state.withLock { state in
                if state.wanted == target { state.wanted = nil }
                state.sleepingUntil = nil
            }
            rings.signal()
        }
        state.withLock { $0.sleepingUntil = nil }
    }
}
