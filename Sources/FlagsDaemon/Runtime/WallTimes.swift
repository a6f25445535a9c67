import FoundationEssentials

/// Boot-clock times as wall times, both clocks read once: what people read (`status`, `expiresAt`, the log) is
/// made by the wall clock as it reads then, so that it is right straight after a wall-clock change.
struct WallTimes {
    let boot: Double
    let wall: Double

    init(_ clock: any DaemonClock) {
        boot = clock.bootNow()
        wall = clock.wallNow()
    }

    func timestamp(_ bootTime: Double?) -> String? {
        bootTime.map(text)
    }

    func text(_ bootTime: Double) -> String {
        Self.timestamp(wall - (boot - bootTime))
    }

    /// Unix seconds as ISO 8601 in UTC.
    static func timestamp(_ seconds: Double) -> String {
        Date(timeIntervalSince1970: seconds).formatted(.iso8601)
    }
}

extension DaemonClock {
    /// A boot-clock time as the wall time people read, by this clock now.
    func wallText(_ bootTime: Double) -> String {
        WallTimes(self).text(bootTime)
    }
}
