import Foundation
import PWFlagsTestKit
import UnixIO

/// What the daemon keeps of a call once it is answered (docs/performance.md, Memory kept per call): for each kind
/// of call on each surface, the daemon's anonymous memory before and after `count` calls, per call. A daemon that
/// runs for months must keep nothing: the goal is 0, read as within the noise of malloc's own bookkeeping.
///
/// Each kind gets a daemon of its own on the local file, serving the line socket and whichever of a private bus,
/// a Varlink socket and an OFREP socket (with no rate limit) the kind uses, and is warmed first (a tenth of the
/// count), so that what a first call builds once is not counted.
///
/// One daemon for every kind read the calls of one kind as kept when an earlier kind had made the heap large: once
/// trimmed, malloc's free blocks lie on pages given back, and later calls touch those pages again as they reuse
/// the blocks. After 100,000 hung-up `refresh` calls (a 60 MB peak), 100,000 `bus.NoSuchMethod` calls read 109 B
/// each, and three more floods 112 B, 112 B and 16 B, while malloc's bytes in use (`malloc_stats`) stayed at
/// 1.27 MB throughout. Memory kept per call is kept again by every flood; a row above the noise is read from a
/// second flood, and says so.
enum KeptPerCall {
    static let section = "memory kept per call"
    /// Per call, past which a kind is reported as keeping memory.
    static let noise = 16.0
    /// How long a reading waits for the calls in flight to end and the memory to settle.
    static let settleLimit: Duration = .seconds(300)

    /// The daemon the rows measure: the local file, on the line socket and, as far as `calls` use them, a
    /// private bus, a Varlink socket and an OFREP socket without a rate limit (so that `--kinds` narrowed to the
    /// older surfaces also measures a daemon that predates Varlink); `body` gets the daemon and the address of
    /// each surface.
    static func withDaemon(
        bench: Benchmark, report: Report, directory: TemporaryDirectory, calls: [FloodCall],
        _ body: (DaemonProcess, @escaping @Sendable (FloodCall.Surface) -> String) throws -> Void
    ) throws {
        let surfaces = Set(calls.map(\.surface))
        let bus = surfaces.contains(.bus) ? try PrivateBus(directory: directory) : nil
        if surfaces.contains(.bus) && bus == nil {
            report.add(section, "(dbus-daemon missing)", .nan, "B")
            return
        }
        defer { bus?.stop() }
        let ofrep = directory.file("kept-ofrep.sock")
        let varlink = directory.file("kept-varlink.sock")
        // The daemon of an earlier kind may have left them.
        for socket in [ofrep, varlink] { try? FileManager.default.removeItem(atPath: socket) }
        var extra = bus == nil ? "" : "[DBus]\nBus=session\n"
        if surfaces.contains(.ofrep) { extra += "[OFREP]\nListenAddress=\(ofrep)\nRequestRate=0\n" }
        if surfaces.contains(.varlink) { extra += "[Varlink]\nSocketPath=\(varlink)\n" }
        let daemon = try bench.localDaemon(
            flags: 100, name: "kept", extra: extra,
            environment: bus.map { ["DBUS_SESSION_BUS_ADDRESS": $0.address] } ?? [:])
        defer { daemon.cleanUp() }
        if let bus, try !CallFlood.waitForBusName(at: bus.address) {
            report.add(section, "(the daemon never owned its name)", .nan, "B")
            return
        }
        let socketPath = daemon.socketPath
        let busAddress = bus?.address ?? ""
        try body(daemon) { surface in
            switch surface {
            case .line: socketPath
            case .bus: busAddress
            case .ofrep: ofrep
            case .varlink: varlink
            }
        }
    }

    /// The catalogue's kinds, or those of them named in `kinds` (by their row names).
    static func catalogue(_ kinds: Set<String>?) -> [FloodCall] {
        FloodCall.catalogue(key: "flag_7").filter { kinds?.contains($0.name) ?? true }
    }

    static func run(
        bench: Benchmark, extent: Extent, kinds: Set<String>? = nil, report: Report, directory: TemporaryDirectory
    ) throws {
        // A smoke run (the smoke test, under the sanitizers too) only shows that every kind runs through the
        // bench: 100 of each, each reading taken without waiting for the heap to settle.
        let count = extent.pick(full: 100_000, quick: 2_000, smoke: 100)
        let quiet: Duration = extent == .smoke ? .zero : .milliseconds(400)
        var worst = 0.0
        // A daemon for each kind; a shorter run, whose figures only show that every kind runs, shares one.
        let calls = catalogue(kinds)
        for group in extent != .full ? [calls] : calls.map({ [$0] }) {
            try withDaemon(bench: bench, report: report, directory: directory, calls: group) { daemon, address in
                let pid = daemon.process.processIdentifier
                /// One flood of `made` calls of `call` between two settled readings: bytes per call, calls answered, and
                /// whether every connection had closed by the second reading; nil when the daemon is gone.
                func measure(_ call: FloodCall, _ made: Int) throws -> (perCall: Double, answered: Int, drained: Bool)?
                {
                    // Hung-up calls are still being carried out when a flood returns (up to MaxConnections of
                    // them, each holding its connection): both readings wait until the daemon is back to the
                    // descriptors it had before the warm-up, or a reading counts the calls in flight as kept.
                    // A new daemon opens some of its descriptors after its socket is ready: a few calls find its
                    // listeners open, and a quiet heap that it has finished starting.
                    _ = try CallFlood.run(call, count: 10, at: address(call.surface))
                    _ = Measure.settledAnonymousKiB(pid: pid, quiet: quiet)
                    let descriptors = Measure.openDescriptors(of: pid)
                    _ = try CallFlood.run(call, count: made / 10, at: address(call.surface))
                    guard
                        let before = Measure.settledAnonymousKiB(
                            pid: pid, descriptors: descriptors, quiet: quiet, timeout: settleLimit)
                    else { return nil }
                    let tally = try CallFlood.run(call, count: made, at: address(call.surface))
                    guard
                        let after = Measure.settledAnonymousKiB(
                            pid: pid, descriptors: descriptors, quiet: quiet, timeout: settleLimit)
                    else { return nil }
                    let drained = (Measure.openDescriptors(of: pid) ?? .max) <= (descriptors ?? .max)
                    return (Double(after - before) * 1024 / Double(made), tally.answered, drained)
                }
                for call in group {
                    // The state-writing kinds sync a file each time: a tenth as many, which still shows 100 bytes
                    // a call.
                    let made = call.writesState ? count / 10 : count
                    guard var reading = try measure(call, made) else {
                        report.add(section, "\(call.name) (the daemon ended)", .nan, "B")
                        return
                    }
                    var again = ""
                    if reading.perCall > noise && extent == .full, let second = try measure(call, made) {
                        again = ", a second flood (the first read \(Int(reading.perCall.rounded())) B)"
                        reading = second
                    }
                    worst = max(worst, reading.perCall)
                    let name = "\(call.name) (\(reading.answered) calls)" + again
                    let undrained = ", connections still open after \(settleLimit.components.seconds) s"
                    report.add(section, reading.drained ? name : name + undrained, reading.perCall, "B")
                }
            }
        }
        report.add(section, "the most any kind kept", worst, "B", target: "≤ \(Int(noise))", met: worst <= noise)
    }

    /// The soak CI runs (`--call-soak SECONDS`): for `seconds`, every kind of call on every surface, 200 of each
    /// in turn, the line socket and the bus from one thread while Varlink and OFREP go from another, in two
    /// halves with the daemon's anonymous memory read, settled, after a first round and after each half.
    ///
    /// It holds when the whole run grew less than 2 MiB and the second half less than 1 MiB. malloc keeps the
    /// high-water mark of a mix this busy (its arenas' pages are touched by scattered small blocks, not held by
    /// live ones): about 1.3 MiB, most of it in the first half, flat after a few minutes. Memory kept per call
    /// grows with the calls instead, as much in the second half as in the first: 10 bytes a call shows as
    /// 1.5 MiB in either half of a 60-second run. Returns whether it held.
    static func soak(
        seconds: Int, kinds: Set<String>? = nil, bench: Benchmark, report: Report, directory: TemporaryDirectory
    ) throws -> Bool {
        var held = false
        let calls = catalogue(kinds)
        try withDaemon(bench: bench, report: report, directory: directory, calls: calls) { daemon, address in
            let pid = daemon.process.processIdentifier
            let answered = Locked(0)
            let failure = Locked<String?>(nil)
            @Sendable func round(_ surfaces: Set<FloodCall.Surface>) {
                for call in calls where surfaces.contains(call.surface) {
                    do {
                        let tally = try CallFlood.run(
                            call, count: call.writesState ? 20 : 200, at: address(call.surface))
                        answered.withLock { $0 += tally.answered }
                    } catch {
                        failure.withLock { $0 = $0 ?? "\(call.name): \(error)" }
                    }
                }
            }
            let pairs: [Set<FloodCall.Surface>] = [[.line, .bus], [.varlink, .ofrep]]
            let lanes = pairs.filter { lane in calls.contains { lane.contains($0.surface) } }
            // Both lanes side by side for `duration`, then the settled reading.
            func half(_ duration: Duration) -> Int? {
                let end = ContinuousClock.now + duration
                DispatchQueue.concurrentPerform(iterations: lanes.count) { lane in
                    while ContinuousClock.now < end, failure.withLock({ $0 == nil }) { round(lanes[lane]) }
                }
                return Measure.settledAnonymousKiB(pid: pid, descriptors: descriptors, timeout: .seconds(60))
            }
            round([.line, .bus, .varlink, .ofrep])
            let descriptors = Measure.openDescriptors(of: pid)
            guard let before = Measure.settledAnonymousKiB(pid: pid, descriptors: descriptors) else { return }
            answered.withLock { $0 = 0 }
            let middle = half(.seconds(seconds) / 2)
            let firstCalls = answered.withLock { $0 }
            let after = half(.seconds(seconds) / 2)
            let secondCalls = answered.withLock { $0 } - firstCalls
            let grown = after.map { $0 - before } ?? .max
            let grownLate = after.flatMap { after in middle.map { after - $0 } } ?? .max
            let problem = failure.withLock { $0 }
            // Under a sanitizer memory is held in quarantine and says nothing of the daemon: the run must only
            // go through.
            let judged = !Sanitizer.isActive
            let wholeMet = grown < 2048 || !judged
            let lateMet = grownLate < 1024 || !judged
            held = problem == nil && wholeMet && lateMet
            let section = "call soak"
            report.add(
                section, "RssAnon after \(seconds) s of every kind (\(firstCalls + secondCalls) calls)",
                Double(grown), "KiB", target: judged ? "< 2048 KiB over the first round" : "(not judged: sanitizer)",
                met: wholeMet)
            report.add(
                section, "RssAnon over the second half (\(secondCalls) calls)", Double(grownLate), "KiB",
                target: judged ? "< 1024 KiB" : "(not judged: sanitizer)", met: lateMet)
            if let problem { report.add(section, "(stopped: \(problem))", .nan, "") }
        }
        return held
    }
}
