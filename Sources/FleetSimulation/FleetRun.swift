public import FlagsCore

/// What one scenario's run produced: requests per minute as Pushwoosh saw them, and what the devices served.
public struct FleetRun: Sendable {
    public let scenario: Scenario
    public let devices: Int
    public let days: Double
    public let settings: RefreshPolicy.Settings
    /// Requests sent in each simulated minute, answered or not.
    public let perMinute: [Int32]
    public let totalRequests: Int
    /// The oldest flags a complete response replaced when no failure came before it: what devices serve once
    /// Pushwoosh answers (RefreshInterval plus the spread at most).
    public let maxAgeHealthy: Double
    /// The oldest flags a complete response replaced, failures included.
    public let maxAgeAny: Double
    /// The longest any device went without a complete response (counted from its power-on).
    public let maxGapWithoutSuccess: Double
    /// Requests per device while Pushwoosh was down: the mean and the most any device sent.
    public let outageRequestsMean: Double
    public let outageRequestsMax: Int
    /// Times a device's flags reached CacheMaxAge and were no longer served.
    public let expiries: Int
    public let capacityPerMinute: Int?
    /// Wakes the policy asked for at or before the moment it was asked: always 0 unless the policy has a bug.
    public let busyWakes: Int

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
