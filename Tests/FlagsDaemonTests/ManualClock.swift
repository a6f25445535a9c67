import TestSupport
import UnixIO

@testable import FlagsDaemon

/// A daemon clock the test moves by hand: the boot clock and the wall clock apart, so that a wall-clock change
/// (NTP, an operator) and a suspend (the boot clock jumps, and the wall clock with it) can be told apart.
///
/// By default a sleep passes at once and moves both clocks, so that code waiting on it goes on. With
/// `holdingSleeps`, a sleep waits until `advance` reaches its deadline or its task is cancelled, and the test
/// sees the deadlines slept towards: that is how a loop that sleeps is driven.
final class ManualClock: DaemonClock {
    private struct Sleeper {
        let id: Int
        let deadline: Double
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var boot: Double
        var wall: Double
        var sleepers: [Sleeper] = []
        var nextID = 0
        /// Every deadline a held sleep began with, in order.
        var deadlines: [Double] = []
    }

    private let state: Locked<State>
    private let holdsSleeps: Bool
    /// Fired when a held sleep begins, for a test that waits for the loop to sleep.
    let slept = ChangeSignal()

    init(boot: Double = 1000, wall: Double = 1_800_000_000, holdingSleeps: Bool = false) {
        state = Locked(State(boot: boot, wall: wall))
        holdsSleeps = holdingSleeps
    }

    func bootNow() -> Double { state.withLock { $0.boot } }
    func wallNow() -> Double { state.withLock { $0.wall } }

    func sleep(until deadline: Double) async {
        guard holdsSleeps else {
            advance(by: max(0, deadline - bootNow()))
            return
        }
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    state.deadlines.append(deadline)
                    if deadline <= state.boot || Task.isCancelled { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
                slept.fire()
            }
        } onCancel: {
            let woken = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            woken?.continuation.resume()
        }
    }

    /// How many held sleeps are waiting.
    var sleeping: Int { state.withLock { $0.sleepers.count } }

    /// The deadlines of the held sleeps so far, on the boot clock.
    var deadlines: [Double] { state.withLock { $0.deadlines } }

    /// Time passes: both clocks move (a suspend moves both too, since the boot clock counts through it), and held
    /// sleeps whose deadline has come end.
    func advance(by seconds: Double) {
        let woken = state.withLock { state -> [Sleeper] in
            state.boot += seconds
            state.wall += seconds
            let boot = state.boot
            let due = state.sleepers.filter { $0.deadline <= boot }
            state.sleepers.removeAll { $0.deadline <= boot }
            return due
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }

    /// The wall clock is set: only the wall clock moves.
    func setWall(by seconds: Double) {
        state.withLock { $0.wall += seconds }
    }

    /// The wall clock is set to `wall`.
    func setWall(to wall: Double) {
        state.withLock { $0.wall = wall }
    }
}
