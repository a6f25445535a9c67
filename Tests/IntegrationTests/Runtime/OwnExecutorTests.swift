import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon runs its tasks on executors of its own (Sources/Executors), installed before its first task: no
/// thread of libdispatch's ever starts in it, and so neither does libdispatch's workqueue monitor, a timer that
/// would wake it every second for good (docs/performance.md, Idle wakeups). Checked as the kernel shows the
/// running daemon, not by counting its wakeups: the names of its threads and the clocks of its timers.
///
/// What would break it, and shows here: the executors installed too late or not at all (main.swift made async
/// again, the SPI changed), a Dispatch queue or `DispatchQueue.global()` anywhere on the daemon's paths, an API
/// that uses one underneath. libdispatch names its worker threads after their queues (`com.apple.root.default-qos`,
/// of which the kernel keeps `oot.default-qos`) and arms its timers, the monitor's among them, on a
/// `CLOCK_MONOTONIC` timerfd of its own.
@Suite(.hangLimit) struct OwnExecutorTests {
    /// The threads the daemon starts, by the names it gives them (docs/architecture.md, Threads); the main thread
    /// keeps the process's name.
    static let daemonThreads: Set<String> = [
        "pwflagsd-pool", "pwflagsd-loop", "pwflagsd-curl", "pwflagsd-notify",
    ]

    /// The threads of `pid`: their ids and names (`/proc/PID/task/TID/comm`).
    static func threads(of pid: Int32) -> [(id: Int32, name: String)] {
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return ids.compactMap { id in
            guard let thread = Int32(id),
                let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(id)/comm", encoding: .utf8)
            else { return nil }
            return (thread, name.trimmingCharacters(in: .newlines))
        }
    }

    @Test(
        "After fetches, reloads and control calls, every thread of the daemon is one it named, and its only timers are the wall-clock watch and its executor's boot-clock timer"
    )
    func noDispatchThreadNorTimer() async throws {
        let rig = try PushwooshRig.start(featureFlags: ["DisableThrottle": "yes"])
        defer { rig.stop() }
        let daemon = rig.daemon
        let session = try rig.session()
        // The first fetch at start, then one asked for: each on a libcurl thread of its own.
        #expect(try await Fixtures.waitForFlag("new_checkout", on: session))
        _ = try await rig.server.waitForRequests(count: 1)
        _ = try session.call("refresh")
        _ = try await rig.server.waitForRequests(count: 2)
        // A reload by signal and one by call: the source rebuilt twice, each over when READY=1 follows.
        let before = daemon.notify.received.count
        daemon.signal(SIGHUP)
        #expect(try session.result("reload") == [:])
        let reloaded = await Eventually.wait {
            daemon.notify.received.dropFirst(before).filter { $0.split(separator: "\n").contains("READY=1") }.count >= 2
        }
        #expect(reloaded)
        #expect(try session.result("status")?["flags"] == 1)

        let pid = daemon.process.processIdentifier
        let threads = Self.threads(of: pid)
        #expect(threads.filter { $0.id == pid }.map(\.name) == ["pwflagsd"], "\(threads)")
        #expect(threads.contains { $0.name == "pwflagsd-pool" }, "\(threads)")
        #expect(!threads.contains { $0.name.contains("qos") || $0.name.contains("dispatch") }, "\(threads)")
        let strangers = threads.filter { $0.id != pid && !Self.daemonThreads.contains($0.name) }
        if Sanitizer.isActive {
            // A sanitizer's own threads, which keep the process's name, may be there too.
            #expect(strangers.allSatisfy { $0.name == "pwflagsd" }, "\(threads)")
        } else if Self.isEmulated(pid) {
            // Under qemu-user (the arm64 leg, through binfmt_misc) the emulator adds one thread of its own, its RCU
            // thread, which keeps the process's name: an arm64 program that only sleeps has it too.
            #expect(strangers.count <= 1 && strangers.allSatisfy { $0.name == "pwflagsd" }, "\(threads)")
        } else {
            #expect(strangers.isEmpty, "\(threads)")
        }
        let timers = DaemonTimerClockTests.timers(of: pid)
        #expect(timers.filter { $0.clockID == DaemonTimerClockTests.boottime }.count == 1, "\(timers)")
        #expect(timers.filter { $0.clockID == DaemonTimerClockTests.realtime }.count == 1, "\(timers)")
        #expect(!timers.contains { $0.clockID == DaemonTimerClockTests.monotonic }, "\(timers)")
    }

    /// Whether the process runs under qemu-user: binfmt_misc starts the emulator, which `/proc/PID/exe` then names.
    static func isEmulated(_ pid: Int32) -> Bool {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? ""
        return URL(fileURLWithPath: executable).lastPathComponent.hasPrefix("qemu-")
    }
}
