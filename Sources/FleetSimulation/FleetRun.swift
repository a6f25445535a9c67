public import FlagsCore

/// What one scenario's run produced: requests per minute as Pushwoosh saw them, and what the devices served.
public struct FleetRun: Sendable {
    public let scenario: Scenario
    public let devices: Int
    public let days: Double
    public let settings: RefreshPolicy.Settings
    public let capacityPerMinute: Int?
    // What the wakes add up, as the simulation goes.
    /// Requests sent in each simulated minute, answered or not.
    public internal(set) var perMinute: [Int32]
    public internal(set) var totalRequests = 0
    /// The oldest flags a complete response replaced when no failure came before it: what devices serve once
    /// Pushwoosh answers (RefreshInterval plus the spread at most).
    public internal(set) var maxAgeHealthy = 0.0
    /// The oldest flags a complete response replaced, failures included.
    public internal(set) var maxAgeAny = 0.0
    /// The longest any device went without a complete response (counted from its power-on).
    public internal(set) var maxGapWithoutSuccess = 0.0
    /// Requests per device while Pushwoosh was down: the mean and the most any device sent.
    public internal(set) var outageRequestsMean = 0.0
    public internal(set) var outageRequestsMax = 0
    /// Times a device's flags reached CacheMaxAge and were no longer served.
    public internal(set) var expiries = 0
    /// Wakes the policy asked for at or before the moment it was asked: always 0 unless the policy has a bug.
    public internal(set) var busyWakes = 0

    /// A run about to start: `minutes` of simulated time, nothing counted yet.
    init(
        scenario: Scenario, devices: Int, days: Double, settings: RefreshPolicy.Settings, minutes: Int,
        capacityPerMinute: Int?
    ) {
        self.scenario = scenario
        self.devices = devices
        self.days = days
        self.settings = settings
        self.capacityPerMinute = capacityPerMinute
        self.perMinute = [Int32](repeating: 0, count: minutes)
    }

    /// The fleet's mean rate: one request per device per RefreshInterval, per minute.
    public var fleetMeanPerMinute: Double { Double(devices) * 60 / settings.refreshInterval }

    /// The mean and the busiest minute of `from..<to` (simulated seconds).
    public func window(from: Double, to: Double) -> (mean: Double, peak: Int) {
        let first = max(0, Int(from / 60))
        let last = min(perMinute.count, Int((to / 60).rounded(.up)))
        guard first < last else { return (0, 0) }
        var sum = 0
        var peak = 0
        for minute in first..<last {
            let count = Int(perMinute[minute])
            sum += count
            peak = max(peak, count)
        }
        return (Double(sum) / Double(last - first), peak)
    }

    /// The mean per minute over the whole run.
    public var mean: Double { window(from: 0, to: days * 86400).mean }
}
