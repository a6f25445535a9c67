import FlagsCore
import Foundation
import PWFlagsTestKit
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// One soak run (docs/reliability.md, Soak): a real pwflagsd under steady reads, a flag change every second and
/// subscribers coming and going, then the checks: memory and descriptors back where they were, every subscriber's flags
/// equal to `getAll`, no notification lost, no error.
final class Soak {
    let options: SoakOptions
    let report: Report
    private let tally = Tally()
    private let history = FlagHistory()

    init(options: SoakOptions, report: Report) {
        self.options = options
        self.report = report
    }

    /// Runs the soak and fills the report; true on PASS.
    func run() throws -> Bool {
        var random = SeededGenerator(seed: options.seed)
        let model = FlagModel(count: options.flags, random: &random)
        // Started from the main thread, which lives as long as the soak: the daemon dies with it.
        let daemon = try DaemonProcess.serving(
            model.sorted,
            extra: "[Daemon]\nLogLevel=notice\nMaxConnections=1024\n"
                + (options.idleTimeout.map { "IdleConnectionTimeout=\($0)s\n" } ?? ""),
            launcher: DaemonProcess.parentDeathLauncher)
        defer { daemon.cleanUp() }
        // The soak's own questions (status, the final getAll) go on a connection opened for each: one kept from the
        // warm-up to the end sat idle past IdleConnectionTimeout (5 min) in any longer run, the daemon closed it as
        // documented, and the final getAll then failed with EPIPE before any verdict.
        func control() throws -> SocketSession { try SocketSession(socketPath: daemon.socketPath) }
        let changer = FlagChanger(daemon: daemon, model: model, history: history, tally: tally, seed: random.next())
        try changer.start()
        let firstRevision = changer.lastRevision
        let getters = (0..<options.getters).map { _ in
            Getter(
                socketPath: daemon.socketPath, rate: max(1, options.rate / options.getters), universe: model.universe,
                tally: tally, seed: random.next())
        }
        for getter in getters { getter.start() }
        let churn = SubscriberChurn(
            socketPath: daemon.socketPath, universe: model.universe,
            bounds: options.minimumSubscribers...options.maximumSubscribers, tally: tally, seed: random.next())
        churn.start()

        // The start figures come after a warm-up, once allocator caches and buffers have reached their size.
        let begin = MonotonicClock.nanoseconds()
        let warmUp = min(10, max(1, options.seconds / 10))
        Self.sleep(until: begin + UInt64(warmUp) * 1_000_000_000)
        let start = try churn.paused {
            let open = getters.count + 2 + churn.liveSubscribers.reduce(0) { $0 + $1.connections }
            return try DaemonReading.take(of: daemon, connections: open, session: control())
        }
        log("warm-up done after \(warmUp) s: \(Self.describe(start))")
        Self.sleep(until: begin + UInt64(options.seconds) * 1_000_000_000)

        churn.stop()
        changer.stop()
        for getter in getters { getter.stop() }
        let seconds = Double(MonotonicClock.nanoseconds() - begin) / 1e9
        log("load stopped after \(Report.format(seconds)) s; settling")

        let final = try finalFlags(control(), expected: changer.lastRevision)
        let live = churn.liveSubscribers
        let settled = settle(live, final: final)
        var checked = 0
        var unknown = 0
        for subscriber in churn.allSubscribers {
            let (states, unknownStates) = subscriber.verifyStates(against: history, tally: tally)
            checked += states
            unknown += unknownStates
        }
        let end = try DaemonReading.take(
            of: daemon, connections: 1 + live.reduce(0) { $0 + $1.connections }, session: control())
        churn.closeAll()
        let alone = try DaemonReading.take(of: daemon, connections: 1, session: control())
        let wasRunning = daemon.isRunning
        if alone.ownDescriptors != start.ownDescriptors || alone.reportedConnections != 1 {
            log(
                "the daemon reports \(alone.reportedConnections) connections for the soak's 1; descriptors it has "
                    + "now and had not after warm-up: \(alone.extraTargets(since: start))")
        }
        let exitStatus = stopDaemon(daemon)

        let counts = tally.current
        addFigures(
            seconds: seconds, start: start, end: end, alone: alone, counts: counts,
            revisions: final.revision - firstRevision, live: live.count, settled: settled,
            states: (checked, unknown))
        report.add(
            "daemon", "running until stopped", wasRunning ? 1 : 0, "", target: "= 1", met: wasRunning)
        report.add(
            "daemon", "exit status on SIGTERM", Double(exitStatus ?? -1), "", target: "= 0", met: exitStatus == 0)
        report.add("daemon", "log lines (notice and above)", Double(daemon.log.split(separator: "\n").count), "")

        let passed = report.figures.allSatisfy { $0.met != false } && counts.failureCount == 0
        report.extra = [
            "verdict": .string(passed ? "PASS" : "FAIL"), "seed": .string(String(options.seed)),
            "errors": .array(counts.messages.map(JSONValue.string)),
        ]
        let tail = daemon.log.split(separator: "\n").suffix(passed ? 10 : 30).joined(separator: "\n")
        if !tail.isEmpty { log("the daemon's log ends with:\n\(tail)") }
        return passed
    }

    /// `getAll` after the last change: its revision must be the last the changer saw.
    private func finalFlags(_ control: SocketSession, expected: Int) throws -> FinalFlags {
        guard let result = try control.result("getAll"), let revision = result["revision"]?.integerValue else {
            throw SoakError("the final getAll failed")
        }
        if revision != expected {
            tally.fail(.change, "getAll is at revision \(revision) after the last change, the changer saw \(expected)")
        }
        return FinalFlags(revision: revision, flags: result["flags"]?.arrayValue ?? [])
    }

    /// Waits (at most 15 s) for every live subscriber to reach the final flags; returns how many did.
    private func settle(_ subscribers: [any SoakSubscriber], final: FinalFlags) -> Int {
        let deadline = MonotonicClock.nanoseconds() + 15_000_000_000
        var pending = subscribers
        while !pending.isEmpty, MonotonicClock.nanoseconds() < deadline {
            pending = pending.filter { $0.difference(from: final) != nil }
            if !pending.isEmpty { usleep(10_000) }
        }
        for subscriber in pending {
            tally.fail(.mismatch, subscriber.difference(from: final) ?? "\(subscriber.name) differs from getAll")
        }
        return subscribers.count - pending.count
    }

    private func addFigures(
        seconds: Double, start: DaemonReading, end: DaemonReading, alone: DaemonReading, counts: Tally.Counts,
        revisions: Int, live: Int, settled: Int, states: (checked: Int, unknown: Int)
    ) {
        let mebibyte = 1024.0
        let growth = end.rss - start.rss
        let bound = max(8 * mebibyte, start.rss * 0.2)
        report.add("memory", "VmRSS at start", start.rss / mebibyte, "MiB")
        report.add("memory", "VmRSS at end", end.rss / mebibyte, "MiB")
        report.add("memory", "RssAnon at start", start.anon / mebibyte, "MiB")
        report.add("memory", "RssAnon at end", end.anon / mebibyte, "MiB")
        if Sanitizer.isActive {
            // Under a sanitizer its quarantine and shadow memory make the growth meaningless: reported, not judged.
            report.add("memory", "VmRSS growth", growth / mebibyte, "MiB")
        } else {
            report.add(
                "memory", "VmRSS growth", growth / mebibyte, "MiB",
                target: "≤ \(Report.format(bound / mebibyte)) (8 MiB or 20%)", met: growth <= bound)
        }

        report.add("descriptors", "open fds at start", Double(start.descriptors), "")
        report.add("descriptors", "soak connections at start", Double(start.connections), "")
        report.add("descriptors", "open fds at end", Double(end.descriptors), "")
        report.add("descriptors", "soak connections at end", Double(end.connections), "")
        let leaked = end.ownDescriptors - start.ownDescriptors
        report.add(
            "descriptors", "fds beyond connections, end − start", Double(leaked), "", target: "= 0", met: leaked == 0)
        report.add(
            "descriptors", "daemon connections at end (status)", Double(end.reportedConnections), "",
            target: "= \(end.connections)", met: end.reportedConnections == end.connections)
        report.add("descriptors", "open fds, every subscriber closed", Double(alone.descriptors), "")
        let leakedAlone = alone.ownDescriptors - start.ownDescriptors
        report.add(
            "descriptors", "fds beyond connections, closed − start", Double(leakedAlone), "", target: "= 0",
            met: leakedAlone == 0)

        let failures = counts.failures
        report.add("load", "seconds", seconds, "s")
        report.add("load", "requests served", Double(counts.requests), "")
        report.add("load", "requests per second", Double(counts.requests) / seconds, "1/s")
        report.add(
            "load", "request errors", Double(failures[.request] ?? 0), "", target: "= 0", met: failures[.request] == nil
        )

        report.add("changes", "flag file changes", Double(counts.changes), "")
        report.add("changes", "daemon revisions", Double(revisions), "")
        report.add(
            "changes", "change errors", Double(failures[.change] ?? 0), "", target: "= 0", met: failures[.change] == nil
        )

        report.add("subscribers", "raw opened", Double(counts.rawOpened), "")
        report.add("subscribers", "raw closed", Double(counts.rawClosed), "")
        report.add("subscribers", "raw unlisten calls", Double(counts.unlistened), "")
        report.add("subscribers", "raw listen again on the same connection", Double(counts.resubscribed), "")
        report.add("subscribers", "library mirrors opened", Double(counts.libraryOpened), "")
        report.add("subscribers", "library mirrors closed", Double(counts.libraryClosed), "")
        report.add("subscribers", "open at the end", Double(live), "")
        report.add(
            "subscribers", "daemon subscriptions at end", Double(end.subscriptions), "", target: "= \(live)",
            met: end.subscriptions == live)
        report.add(
            "subscribers", "daemon subscriptions, every subscriber closed", Double(alone.subscriptions), "",
            target: "= 0", met: alone.subscriptions == 0)
        report.add("subscribers", "notifications applied", Double(counts.notifications), "")
        report.add(
            "subscribers", "subscriber errors", Double(failures[.subscriber] ?? 0), "", target: "= 0",
            met: failures[.subscriber] == nil)

        report.add(
            "mirror check", "open subscribers equal to getAll", Double(settled), "", target: "= \(live)",
            met: settled == live)
        report.add("mirror check", "states checked against getAll's history", Double(states.checked), "")
        report.add("mirror check", "states of a revision getAll never showed", Double(states.unknown), "")
        report.add(
            "mirror check", "lost notifications", Double(failures[.lostNotification] ?? 0), "", target: "= 0",
            met: failures[.lostNotification] == nil)
        report.add(
            "mirror check", "mismatches", Double(failures[.mismatch] ?? 0), "", target: "= 0",
            met: failures[.mismatch] == nil)
    }

    /// SIGTERM, then the exit status within 10 s; when it does not come, the threads' stacks (with gdb, when
    /// installed) go to stderr before SIGKILL.
    private func stopDaemon(_ daemon: DaemonProcess) -> Int32? {
        daemon.signal(SIGTERM)
        if let status = daemon.waitForExit(timeout: .seconds(10)) { return status }
        let pid = daemon.process.processIdentifier
        log("pwflagsd (pid \(pid)) did not exit within 10 s of SIGTERM")
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") {
            let gdb = Process()
            gdb.executableURL = URL(fileURLWithPath: "/usr/bin/gdb")
            gdb.arguments = ["-p", String(pid), "-batch", "-ex", "thread apply all bt"]
            gdb.standardOutput = FileHandle.standardError
            gdb.standardError = FileHandle.standardError
            try? gdb.run()
            gdb.waitUntilExit()
        }
        daemon.signal(SIGKILL)
        _ = daemon.waitForExit(timeout: .seconds(5))
        return nil
    }

    private static func describe(_ reading: DaemonReading) -> String {
        "VmRSS \(Report.format(reading.rss / 1024)) MiB, RssAnon \(Report.format(reading.anon / 1024)) MiB, "
            + "\(reading.descriptors) fds with \(reading.connections) soak connections"
    }

    private static func sleep(until deadline: UInt64) {
        while true {
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { return }
            usleep(UInt32(min(deadline - now, 200_000_000) / 1000))
        }
    }

    private func log(_ message: String) {
        FileHandle.standardError.write(Data("pwflags-soak: \(message)\n".utf8))
    }
}
