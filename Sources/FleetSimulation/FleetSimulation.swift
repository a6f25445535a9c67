public import FlagsCore

/// A fleet of simulated devices, each driven by FlagsCore's real `RefreshPolicy`, against a simulated Pushwoosh,
/// on one event queue over simulated days.
///
/// Each device keeps its own boot clock (the policy's time): a device powered on at simulated second `t` reads
/// `t − powerOn + 10` on it, one booted long ago reads far more. Every wake asks the policy what is due, sends
/// the request it wants (the reply arrives at once), and sleeps until the policy's next wake.
public struct FleetSimulation: Sendable {
    public var devices: Int
    public var days: Double
    public var configuration: Configuration
    public var seed: UInt64

    public init(
        devices: Int = 1_000_000, days: Double = 3, configuration: Configuration = Configuration(), seed: UInt64 = 1
    ) {
        self.devices = devices
        self.days = days
        self.configuration = configuration
        self.seed = seed
    }

    /// Runs `scenario` to the end and returns what Pushwoosh saw and what the devices served.
    public func run(_ scenario: Scenario) -> FleetRun {
        var random = SplitMix(seed: seed)
        let settings = RefreshPolicy.Settings(configuration)
        let interval = settings.refreshInterval
        let end = days * 86400
        let minutes = Int((end / 60).rounded(.up))
        let meanPerMinute = Double(devices) * 60 / interval
        let capacity = scenario.capacityFactor.map { Int(($0 * meanPerMinute).rounded()) }
        var server = SimulatedPushwoosh(
            outage: scenario.outage, capacityPerMinute: capacity, retryAfter: scenario.retryAfter, minutes: minutes)

        var fleet: [Device] = []
        fleet.reserveCapacity(devices)
        for device in 0..<devices {
            let phase = RefreshPolicy.phase(forDevice: "fleet-device-\(device)")
            var state = Device(policy: RefreshPolicy(settings: settings, phase: phase))
            switch scenario.start {
            case .steady:
                state.powerOn = 0
                state.bootOffset = 600 + random.unit() * 30 * 86400
                state.cachedAt = state.bootOffset - random.unit() * interval
            case .massPowerOnCached:
                state.powerOn = random.unit() * 60
                state.bootOffset = 10 - state.powerOn
                state.cachedAt = 10 - 3600 - random.unit() * 11 * 3600
            case .massPowerOnNew:
                state.powerOn = random.unit() * 60
                state.bootOffset = 10 - state.powerOn
            }
            state.lastSuccess = state.powerOn
            fleet.append(state)
        }
        // Laid out in the order of their slots in simulated time, so that the wakes, which come in that order,
        // walk memory forwards instead of jumping around a few hundred megabytes: which device is which does not
        // matter to the result, and this makes the run several times faster.
        let spread = max(settings.effectiveSpread, 1)
        let keys = fleet.map { state in
            let key = (state.policy.phase * spread - state.bootOffset).truncatingRemainder(dividingBy: spread)
            return key < 0 ? key + spread : key
        }
        fleet = keys.indices.sorted { keys[$0] < keys[$1] }.map { fleet[$0] }
        var queue = EventQueue(end: end)
        for device in 0..<devices { queue.push(fleet[device].powerOn, device: device) }

        var run = FleetRun(
            scenario: scenario, devices: devices, days: days, settings: settings, minutes: minutes,
            capacityPerMinute: capacity)
        fleet.withUnsafeMutableBufferPointer { fleet in
            while let (time, device) = queue.pop() {
                if let wake = step(&fleet[device], at: time, server: &server, random: &random, run: &run) {
                    queue.push(wake, device: device)
                }
            }
        }
        var outageTotal = 0
        for state in fleet {
            run.maxGapWithoutSuccess = max(run.maxGapWithoutSuccess, end - state.lastSuccess)
            outageTotal += Int(state.outageRequests)
            run.outageRequestsMax = max(run.outageRequestsMax, Int(state.outageRequests))
        }
        run.outageRequestsMean = Double(outageTotal) / Double(max(devices, 1))
        return run
    }

    /// One device: its policy and what the simulation keeps beside it, together so that a wake touches one place.
    struct Device {
        var policy: RefreshPolicy
        /// The device's boot clock minus simulated time.
        var bootOffset = 0.0
        /// The fetch time of the disk cache it starts with (boot clock); NaN: none.
        var cachedAt = Double.nan
        /// The boot-clock time it asked to wake at: converting it to simulated time and back may round it down
        /// by a hair, and the policy must see the very time it asked for.
        var wakeAt = -Double.infinity
        /// When the device powers on and its daemon starts (simulated time).
        var powerOn = 0.0
        /// The simulated time of its last complete response; its power-on before the first.
        var lastSuccess = 0.0
        var started = false
        var fetchedOnce = false
        var outageRequests: UInt16 = 0
    }

    /// One wake of one device at simulated `time`: what is due, the request it sends and its answer, added up
    /// in `run`. Returns the simulated time of its next wake.
    private func step(
        _ state: inout Device, at time: Double, server: inout SimulatedPushwoosh, random: inout SplitMix,
        run: inout FleetRun
    ) -> Double? {
        let now = max(time + state.bootOffset, state.wakeAt)
        if !state.started {
            state.started = true
            state.policy.start(now: now, cachedFetchedAt: state.cachedAt.isNaN ? nil : state.cachedAt)
        }
        let due = state.policy.due(now: now)
        if due.expireFlags { run.expiries += 1 }
        if !due.refresh.isEmpty {
            let healthy = state.policy.failures == 0
            state.policy.requestStarted(now: now)
            run.perMinute[min(Int(time / 60), run.perMinute.count - 1)] += 1
            run.totalRequests += 1
            if let outage = server.outage, outage.contains(time) { state.outageRequests &+= 1 }
            switch server.answer(at: time) {
            case .complete:
                if state.fetchedOnce {
                    let age = time - state.lastSuccess
                    run.maxAgeAny = max(run.maxAgeAny, age)
                    if healthy { run.maxAgeHealthy = max(run.maxAgeHealthy, age) }
                }
                run.maxGapWithoutSuccess = max(run.maxGapWithoutSuccess, time - state.lastSuccess)
                state.lastSuccess = time
                state.fetchedOnce = true
                state.policy.requestFinished(.complete, automatic: true, now: now, jitter: random.unit())
            case .failed(_, let retryAfter):
                state.policy.requestFinished(
                    .failed, automatic: true, now: now, jitter: random.unit(), retryAfter: retryAfter)
            }
        }
        guard var wake = state.policy.nextWake(now: now) else { return nil }
        if wake <= now {
            // The policy wants to be looked at again at once: a loop here would be a bug in it.
            run.busyWakes += 1
            wake = now + 1
        }
        state.wakeAt = wake
        return wake - state.bootOffset
    }
}
