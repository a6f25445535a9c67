import FlagsCore
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One member of `pwflags` cannot take the bus service from the others (docs/reliability.md, "One member's
/// flood on the bus"), on both buses Debian ships, under the shipped policy.
@Suite(.hangLimit, .enabled(if: getuid() == 0, "creates users: needs root"))
struct BusFloodTests {
    /// How long the flood lasts: 60 s, or 15 s under a sanitizer, where every call costs several times as much
    /// and memory figures mean nothing.
    static let seconds = Sanitizer.isActive ? 15 : 60
    /// The longest another member's call may take while one thread floods, as the attack this reproduces did
    /// (one member's loop). On the release build a device runs (CI floods it alone at the end): 100 ms. Elsewhere
    /// only far from sd-bus's 25 s timeout, which is what such a flood used to cost every other caller: a debug
    /// build's unoptimized code keeps up with dbus-broker's flood on average but not always (2.3 s seen from two
    /// threads in a CI run beside the sanitizer builds), a sanitizer's still less.
    static let bound: Double = DaemonProcess.isReleaseBuild ? 100 : 10_000

    /// A member connects, sends 8 `IsEnabled` calls and hangs up without reading the answers, in a loop (the
    /// attack this reproduces was one loop). Another member's calls meanwhile take at most `bound`; the daemon's
    /// anonymous memory stays under 64 MiB throughout and is back within 8 MiB of where it started within 10 s of
    /// the flood's end, with no other traffic.
    @Test(arguments: BusKind.allCases)
    func aHangUpFloodCostsAnotherMemberNothing(_ kind: BusKind) async throws {
        let rig = try BusRig(kind)
        let daemon = try BusTests.daemon(on: rig)
        defer { daemon.cleanUp() }
        try await BusTests.waitForName(rig)
        let flooder = try SystemUser(prefix: "pwff", groupNames: ["pwflags"])
        defer { flooder.remove() }
        let other = try SystemUser(prefix: "pwfo", groupNames: ["pwflags"])
        defer { other.remove() }
        let pid = daemon.process.processIdentifier
        // Both members have called once: what the flood adds is the flood's.
        #expect(try rig.call("IsEnabled", "sb", ["new_checkout", "false"], as: other).status == 0)
        let idle = try #require(Measure.settledAnonymousKiB(pid: pid))

        let bench = DaemonProcess.executable("pwflags-bench")
        let seconds = String(Self.seconds)
        let address = rig.address
        // Processes of their own, read once they are done: the test's task samples the daemon meanwhile.
        let flood = try RunningCommand(
            bench, ["--bus-hangup-flood", seconds, "--workers", "1", "--at", address], as: flooder)
        let probe = try RunningCommand(bench, ["--bus-probe", seconds, "--at", address], as: other)
        // The daemon's anonymous memory, read every 100 ms while the flood lasts.
        var peak = idle
        let floodEnd = ContinuousClock.now + .seconds(Self.seconds)
        while ContinuousClock.now < floodEnd {
            peak = max(peak, Measure.anonymousKiB(pid: pid) ?? 0)
            try await Task.sleep(for: .milliseconds(100))
        }
        let flooded = try #require(flood.lines(through: "connections", timeout: .seconds(60))?.last)
        let probed = try #require(probe.lines(through: "calls", timeout: .seconds(60))?.last)
        let end = ContinuousClock.now
        let tally = try #require(BusHangUpFlood.Tally(printed: flooded), "\(flooded)")
        let summary = try #require(BusProbe.Result.summary(printed: probed), "\(probed)")
        print(
            "\(kind) hang-up flood: \(tally); the other member: \(probed); RssAnon \(idle) KiB idle, \(peak) KiB at most"
        )

        #expect(tally.connections >= 1_000, "the flood hardly ran: \(tally)")
        #expect(summary.failures == 0 && summary.calls >= Self.seconds, "\(probed)")
        #expect(summary.worstMilliseconds <= Self.bound, "another member waited \(summary.worstMilliseconds) ms")
        // The daemon still answers everyone.
        #expect(try rig.call("IsEnabled", "sb", ["new_checkout", "false"], as: other).status == 0)
        guard !Sanitizer.isActive else { return }
        #expect(peak < 64 << 10, "RssAnon reached \(peak) KiB during the flood")
        // Back within 8 MiB of idle within 10 s, with nothing else happening.
        var after = Int.max
        let settled = await Eventually.wait(timeout: .seconds(10)) {
            after = Measure.anonymousKiB(pid: pid) ?? .max
            return after <= idle + 8 << 10
        }
        #expect(settled, "RssAnon \(after) KiB 10 s after the flood, from \(idle) KiB idle")
        print("\(kind): RssAnon back to \(after) KiB \(ContinuousClock.now - end) after the flood")
    }

    /// The longest another member's call may take while one member keeps 8 `GetAll` calls in flight on a 7.8 MB
    /// set (each answer about 16 MB). The daemon writes one large answer at a time, between the others' calls, at
    /// most 32 MiB of them a second (docs/reliability.md, "Large answers on the bus"), so a call waits for one
    /// answer's passage at most: building it, and the bus reading it off the daemon's one connection, which carries
    /// the answers in order. dbus-broker passes 16 MB on in about 50 ms; dbus-daemon, which reads 2 KB at a time,
    /// in about 130 ms. On the release build: 100 ms on dbus-broker, 250 ms on dbus-daemon, and half of the calls
    /// within 10 ms on both (they wait for nothing). A debug build builds an answer several times slower, a
    /// sanitizer's slower still.
    static func getAllBound(_ kind: BusKind) -> Double {
        guard DaemonProcess.isReleaseBuild else { return Sanitizer.isActive ? 10_000 : 2_000 }
        return kind == .dbusBroker ? 100 : 250
    }

    /// A member keeps 8 `GetAll` calls in flight on the largest set the daemon accepts, for 20 s. Another
    /// member's calls meanwhile take at most `getAllBound`, and the daemon's anonymous memory stays under 128 MiB
    /// (8 answers of 16 MB written at once would be more).
    @Test(arguments: BusKind.allCases)
    func aGetAllFloodDelaysAnotherMemberByOneAnswerAtMost(_ kind: BusKind) async throws {
        let rig = try BusRig(kind)
        let directory = try TemporaryDirectory()
        try directory.write(LocalFlags.fileName, SubscriptionFloodTests.fileText())
        let daemon = try BusTests.daemon(on: rig, directory: directory)
        defer { daemon.cleanUp() }
        try await BusTests.waitForName(rig)
        let flooder = try SystemUser(prefix: "pwfg", groupNames: ["pwflags"])
        defer { flooder.remove() }
        let other = try SystemUser(prefix: "pwfo", groupNames: ["pwflags"])
        defer { other.remove() }
        let pid = daemon.process.processIdentifier
        #expect(try rig.call("IsEnabled", "sb", ["k_1", "false"], as: other).status == 0)
        let idle = try #require(Measure.settledAnonymousKiB(pid: pid))

        let bench = DaemonProcess.executable("pwflags-bench")
        let seconds = "20"
        let flood = try RunningCommand(bench, ["--bus-getall-flood", seconds, "--at", rig.address], as: flooder)
        let probe = try RunningCommand(bench, ["--bus-probe", seconds, "--at", rig.address], as: other)
        var peak = idle
        let floodEnd = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < floodEnd {
            peak = max(peak, Measure.anonymousKiB(pid: pid) ?? 0)
            try await Task.sleep(for: .milliseconds(100))
        }
        let flooded = try #require(flood.lines(through: "replies", timeout: .seconds(60))?.last)
        let probed = try #require(probe.lines(through: "calls", timeout: .seconds(60))?.last)
        let tally = try #require(BusGetAllFlood.Tally(printed: flooded), "\(flooded)")
        let summary = try #require(BusProbe.Result.summary(printed: probed), "\(probed)")
        print(
            "\(kind) GetAll flood: \(tally); the other member: \(probed); RssAnon \(idle) KiB idle, \(peak) KiB at most"
        )

        // Paced at 32 MiB a second, two answers a second at most; a sanitizer's build makes fewer.
        #expect(tally.replies >= (Sanitizer.isActive ? 4 : 20) && tally.errors == 0, "the flood hardly ran: \(tally)")
        #expect(summary.failures == 0 && summary.calls >= 20, "\(probed)")
        #expect(
            summary.worstMilliseconds <= Self.getAllBound(kind), "another member waited \(summary.worstMilliseconds) ms"
        )
        if DaemonProcess.isReleaseBuild {
            #expect(summary.medianMilliseconds <= 10, "half of another member's calls waited \(probed)")
        }
        guard !Sanitizer.isActive else { return }
        #expect(peak < 128 << 10, "RssAnon reached \(peak) KiB during the flood")
    }
}
