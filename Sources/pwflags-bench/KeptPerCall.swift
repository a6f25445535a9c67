import Foundation
import PWFlagsTestKit

/// What the daemon keeps of a call once it is answered (docs/performance.md, Memory kept per call): for each kind
/// of call on each surface, the daemon's anonymous memory before and after `count` calls, per call. A daemon that
/// runs for months must keep nothing: the goal is 0, read as within the noise of malloc's own bookkeeping.
///
/// One daemon on the local file serves the line socket, a private bus, a Varlink socket and an OFREP socket with
/// no rate limit;
/// each kind is warmed first (a tenth of the count), so that what a first call builds once is not counted.
enum KeptPerCall {
    static let section = "memory kept per call"
    /// Per call, past which a kind is reported as keeping memory.
    static let noise = 16.0

    static func run(bench: Benchmark, quick: Bool, report: Report, directory: TemporaryDirectory) throws {
        guard let bus = try PrivateBus(directory: directory) else {
            report.add(section, "(dbus-daemon missing)", .nan, "B")
            return
        }
        defer { bus.stop() }
        let ofrep = directory.file("kept-ofrep.sock")
        let varlink = directory.file("kept-varlink.sock")
        let daemon = try bench.localDaemon(
            flags: 100, name: "kept",
            extra: "[DBus]\nBus=session\n[OFREP]\nListenAddress=\(ofrep)\nRequestRate=0\n"
                + "[Varlink]\nSocketPath=\(varlink)\n",
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { daemon.cleanUp() }
        guard try CallFlood.waitForBusName(at: bus.address) else {
            report.add(section, "(the daemon never owned its name)", .nan, "B")
            return
        }
        let pid = daemon.process.processIdentifier
        let count = quick ? 2_000 : 100_000
        var worst = 0.0
        for call in FloodCall.catalogue(key: "flag_7") {
            let address =
                switch call.surface {
                case .line: daemon.socketPath
                case .bus: bus.address
                case .ofrep: ofrep
                case .varlink: varlink
                }
            // The state-writing kinds sync a file each time: a tenth as many, which still shows 100 bytes a call.
            let calls = call.writesState ? count / 10 : count
            _ = try CallFlood.run(call, count: calls / 10, at: address)
            let descriptors = Measure.openDescriptors(of: pid)
            guard let before = Measure.settledAnonymousKiB(pid: pid, descriptors: descriptors) else { break }
            let tally = try CallFlood.run(call, count: calls, at: address)
            // Hung-up refreshes are still being carried out when the flood returns: waits for the last.
            guard let after = Measure.settledAnonymousKiB(pid: pid, descriptors: descriptors, timeout: .seconds(60))
            else { break }
            let perCall = Double(after - before) * 1024 / Double(calls)
            worst = max(worst, perCall)
            report.add(section, "\(call.name) (\(tally.answered) calls)", perCall, "B")
        }
        report.add(section, "the most any kind kept", worst, "B", target: "≤ \(Int(noise))", met: worst <= noise)
    }
}
