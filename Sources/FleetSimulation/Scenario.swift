/// One situation of a fleet, simulated with the default configuration unless it says otherwise.
public struct Scenario: Sendable {
    /// How the devices come up.
    public enum Start: Sendable {
        /// Devices booted at random times long ago; their daemons start with usable caches of random age.
        case steady
        /// Every device powers on within the first minute with a usable cache (a store chain opening).
        case massPowerOnCached
        /// Every device powers on within the first minute with no cache (a new fleet).
        case massPowerOnNew
    }

    /// A short name, used for the plot's file name.
    public var name: String
    public var title: String
    public var start: Start
    /// Simulated seconds during which Pushwoosh answers 503 without `Retry-After`.
    public var outage: Range<Double>?
    /// Pushwoosh answers 429 with `Retry-After` above this many times the fleet's mean rate per minute.
    public var capacityFactor: Double?
    /// The `Retry-After` of those 429s, in seconds.
    public var retryAfter: Double = 120

    public init(
        name: String, title: String, start: Start, outage: Range<Double>? = nil, capacityFactor: Double? = nil
    ) {
        self.name = name
        self.title = title
        self.start = start
        self.outage = outage
        self.capacityFactor = capacityFactor
    }

    /// The scenarios of the table (docs/fleet.md).
    public static let all: [Scenario] = [
        Scenario(name: "steady", title: "steady state (devices booted at random times)", start: .steady),
        Scenario(
            name: "power-on-cached", title: "mass power-on within 60 s, usable caches", start: .massPowerOnCached),
        Scenario(
            name: "power-on-new", title: "mass power-on within 60 s, no cache (a new fleet)", start: .massPowerOnNew),
        Scenario(
            name: "outage", title: "Pushwoosh down (503) for 2 h from hour 24, then back", start: .steady,
            outage: 24 * 3600..<26 * 3600),
        Scenario(
            name: "capacity", title: "new fleet, Pushwoosh capacity 2x the mean, 429 + Retry-After above it",
            start: .massPowerOnNew, capacityFactor: 2),
    ]
}
