import FlagsCore
import TestSupport
import Testing

@testable import FleetSimulation

/// The fleet simulator on a small fleet: every target of the table holds with the default configuration, so CI
/// checks the targets on each change of the refresh policy. The full run (`pwflags-fleet`) uses a million
/// devices; this one is just large enough that a minute's count is not noise (about 500 requests a minute).
@Suite(.hangLimit) struct FleetSimulationTests {
    static let simulation = FleetSimulation(devices: 30_000, days: 1.5)

    @Test("Every scenario meets its target with the defaults", arguments: Scenario.all.map(\.name))
    func targetsHold(name: String) throws {
        let scenario = try #require(Scenario.all.first { $0.name == name })
        let run = Self.simulation.run(scenario)
        var report = FleetReport()
        report.add(run)
        #expect(run.busyWakes == 0)
        for row in report.rows {
            #expect(row.holds ?? true, "\(row.scenario), \(row.window): \(row.measured) against \(row.target)")
        }
        // Once Pushwoosh answers, no device serves flags older than RefreshInterval plus the spread.
        #expect(run.maxAgeHealthy <= run.settings.refreshInterval + run.settings.effectiveSpread + 1)
    }

    @Test("A new fleet fetches once per device at power-on, then spreads")
    func newFleetFetchesOnce() {
        let run = FleetSimulation(devices: 2_000, days: 0.25).run(Scenario.all[2])
        #expect(run.perMinute[0] == 2_000)
        // Nothing more until the first slot a RefreshInterval on: a device whose slot came at most a tenth of
        // the spread before its fetch counts the fetch as on that slot.
        #expect(run.window(from: 60, to: 0.9 * 3600).peak == 0)
        #expect(run.window(from: 0.9 * 3600, to: 2 * 3600).peak > 0)
    }

    @Test("With the SDK's timing (RefreshSpread=0, SessionStartDelay=0) a fleet powered on together stays a herd")
    func sdkTimingIsAHerd() {
        var configuration = Configuration()
        configuration.refreshSpread = .zero
        configuration.sessionStartDelay = .zero
        let run = FleetSimulation(devices: 2_000, days: 0.25, configuration: configuration).run(Scenario.all[1])
        let later = run.window(from: 3600, to: 6 * 3600)
        #expect(Double(later.peak) > 20 * later.mean)
    }

    @Test("The event queue gives events back earliest first")
    func eventQueueOrder() {
        var queue = EventQueue(end: 1000)
        var random = SplitMix(seed: 7)
        var times: [Double] = []
        for device in 0..<500 {
            let time = random.unit() * 1000
            times.append(time)
            queue.push(time, device: device)
        }
        var popped: [Double] = []
        while let (time, device) = queue.pop() {
            #expect(times[device] == time)
            popped.append(time)
        }
        #expect(popped == times.sorted())
    }

    @Test("The plot is SVG with one point per pixel column and the mean line")
    func plot() {
        let run = FleetSimulation(devices: 500, days: 0.5).run(Scenario.all[0])
        let svg = FleetPlot.svg(run)
        #expect(svg.hasPrefix("<svg"))
        #expect(svg.contains("<polyline"))
        #expect(svg.contains("mean 8/min"))
        #expect(svg.hasSuffix("</svg>\n"))
    }

    @Test(
        "Numbers are written without a formatter",
        arguments: [
            (1.005, 2, "1.00"), (1.25, 2, "1.25"), (-0.04, 1, "0.0"), (-2.5, 1, "-2.5"), (16666.67, 0, "16667"),
        ])
    func fixed(value: Double, digits: Int, text: String) {
        #expect(FleetReport.fixed(value, digits) == text)
    }
}
