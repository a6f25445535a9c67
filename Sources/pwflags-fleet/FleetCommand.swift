import Dispatch
import FlagsCore
import FleetSimulation
import Foundation
import UnixIO

/// `pwflags-fleet`: simulates a fleet of devices running the daemon's refresh policy against a simulated
/// Pushwoosh, prints the table of targets and writes one SVG plot per scenario.
///
/// Usage: `pwflags-fleet [--devices N] [--days D] [--scenario NAME] [--out DIR] [--seed S]`. Exits 1 when a
/// target is missed, so a run in CI fails loudly.
@main
struct FleetCommand {
    static func main() {
        var simulation = FleetSimulation()
        var directory: String? = "docs/fleet"
        var only: String?
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        while let argument = arguments.next() {
            let value = arguments.next()
            switch (argument, value) {
            case ("--devices", let value?): simulation.devices = Int(value) ?? simulation.devices
            case ("--days", let value?): simulation.days = Double(value) ?? simulation.days
            case ("--seed", let value?): simulation.seed = UInt64(value) ?? simulation.seed
            case ("--scenario", let value?): only = value
            case ("--out", let value?): directory = value == "-" ? nil : value
            default:
                FileHandle.standardError.write(
                    Data(
                        ("usage: pwflags-fleet [--devices N] [--days D] [--scenario NAME] [--out DIR|-] [--seed S]\n"
                            + "scenarios: \(Scenario.all.map(\.name).joined(separator: ", "))\n").utf8))
                exit(2)
            }
        }
        let clock = ContinuousClock()
        let started = clock.now
        let scenarios = Scenario.all.filter { only == nil || $0.name == only }
        // The scenarios are independent: one thread each, as many at once as there are cores.
        let results = Locked([FleetRun?](repeating: nil, count: scenarios.count))
        let frozen = simulation
        DispatchQueue.concurrentPerform(iterations: scenarios.count) { index in
            let begin = clock.now
            let run = frozen.run(scenarios[index])
            print(
                "\(run.scenario.name): \(run.totalRequests) requests, oldest flags once answering "
                    + "\(FleetReport.fixed(run.maxAgeHealthy, 0)) s, busy wakes \(run.busyWakes), "
                    + "\(FleetReport.fixed((clock.now - begin).seconds, 1)) s")
            results.withLock { $0[index] = run }
        }
        var report = FleetReport()
        for run in results.withLock({ $0 }).compactMap({ $0 }) {
            report.add(run)
            guard let directory else { continue }
            let path = "\(directory)/\(run.scenario.name).svg"
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try FleetPlot.svg(run).write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                print("cannot write \(path): \(error)")
            }
        }
        print("")
        print(report.markdown)
        print("")
        print(
            "\(simulation.devices) devices, \(FleetReport.fixed(simulation.days, 1)) simulated days, "
                + "\(FleetReport.fixed((clock.now - started).seconds, 1)) s in all")
        if !report.allHold {
            print("a target was missed")
            exit(1)
        }
    }
}
