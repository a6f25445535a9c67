import Synchronization

@testable import FlagsDaemon

/// A daemon clock the test moves by hand: the boot clock and the wall clock apart, so that a wall-clock change
/// (NTP, an operator) and a suspend (the boot clock jumps, and the wall clock with it) can be told apart.
/// A sleep passes at once and moves both clocks, so that code waiting on it goes on.
final class ManualClock: DaemonClock {
    private let readings: Mutex<(boot: Double, wall: Double)>

    init(boot: Double = 1000, wall: Double = 1_800_000_000) {
        readings = Mutex((boot, wall))
    }

    func bootNow() -> Double { readings.withLock { $0.boot } }
    func wallNow() -> Double { readings.withLock { $0.wall } }

    func sleep(seconds: Double) async {
        advance(by: max(0, seconds))
    }

    /// Time passes: both clocks move (a suspend moves both too, since the boot clock counts through it).
    func advance(by seconds: Double) {
        readings.withLock {
            $0.boot += seconds
            $0.wall += seconds
        }
    }

    /// The wall clock is set: only the wall clock moves.
    func setWall(by seconds: Double) {
        readings.withLock { $0.wall += seconds }
    }

    /// The wall clock is set to `wall`.
    func setWall(to wall: Double) {
        readings.withLock { $0.wall = wall }
    }
}
