import Foundation

/// Time for the refresher: wall time in Unix seconds (a cache's age survives restarts) and a way to wait.
protocol WallClock: Sendable {
    func now() -> Double
    /// Sleeps for `seconds` or until cancelled.
    func sleep(seconds: Double) async
}

/// The machine's clock.
struct SystemWallClock: WallClock {
    func now() -> Double { Date().timeIntervalSince1970 }

    func sleep(seconds: Double) async {
        try? await Task.sleep(for: .seconds(max(0, seconds)))
    }
}
