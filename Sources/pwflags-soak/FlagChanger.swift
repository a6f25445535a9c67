import FlagsCore
import FlagsProtocol
import Foundation
import PWFlagsTestKit
import Synchronization
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Rewrites the daemon's flags file once a second with random changes, and after each one asks `getAll` for
/// the new revision: it must come, be exactly one more than the last, and hold what the file says.
/// Each revision's flags go into the history the subscribers are checked against.
final class FlagChanger: Sendable {
    private let daemon: DaemonProcess
    private let model: Locked<FlagModel>
    private let history: FlagHistory
    private let tally: Tally
    private let seed: UInt64
    private let worker = WorkerThread()
    /// The last revision `getAll` showed.
    private let revision = Atomic<Int>(0)

    init(daemon: DaemonProcess, model: FlagModel, history: FlagHistory, tally: Tally, seed: UInt64) {
        self.daemon = daemon
        self.model = Locked(model)
        self.history = history
        self.tally = tally
        self.seed = seed
    }

    /// The keys a flag may have.
    var universe: [String] {
        model.withLock { $0.universe }
    }

    /// The last revision recorded.
    var lastRevision: Int {
        revision.load(ordering: .acquiring)
    }

    /// Records the daemon's first revision, then starts the thread.
    func start() throws {
        let session = try SocketSession(socketPath: daemon.socketPath)
        guard let result = try session.result("getAll"), let first = result["revision"]?.integerValue else {
            throw SoakError("the first getAll failed")
        }
        history.record(revision: first, flags: result["flags"]?.arrayValue ?? [])
        revision.store(first, ordering: .releasing)
        worker.start(name: "soak-changer") { [self] in run() }
    }

    /// Stops after the change in progress has settled.
    func stop() {
        worker.stop()
    }

    private func run() {
        var random = SeededGenerator(seed: seed)
        guard var session = tally.connection(.change, { try SocketSession(socketPath: daemon.socketPath) }) else {
            return
        }
        let start = ContinuousClock.now
        var round = 0
        while !worker.isStopping {
            round += 1
            let due = start + .seconds(round)
            while ContinuousClock.now < due, !worker.isStopping { usleep(10_000) }
            guard !worker.isStopping else { return }
            let flags = model.withLock { model in
                _ = model.change(random: &random)
                return model.sorted
            }
            do {
                try daemon.writeFlags(flags)
                do {
                    try settle(flags, session: session)
                } catch {
                    // The daemon closes a connection idle past IdleConnectionTimeout: a round that a loaded machine
                    // delayed that long asks again, once, on a new connection in its place.
                    session = try SocketSession(socketPath: daemon.socketPath)
                    try settle(flags, session: session)
                }
            } catch {
                tally.fail(.change, "round \(round): \(error)")
                return
            }
        }
    }

    /// Waits for `getAll` to show the change: one revision more, with the file's flags.
    private func settle(_ flags: [Flag], session: SocketSession) throws {
        let previous = revision.load(ordering: .acquiring)
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            guard let result = try session.result("getAll"), let current = result["revision"]?.integerValue else {
                throw SoakError("getAll failed")
            }
            if current == previous {
                usleep(2_000)
                continue
            }
            let served = result["flags"]?.arrayValue ?? []
            history.record(revision: current, flags: served)
            revision.store(current, ordering: .releasing)
            tally.update { $0.changes += 1 }
            if current != previous + 1 {
                tally.fail(.change, "revision went from \(previous) to \(current) after one change of the file")
            }
            // The daemon says each flag comes from the file.
            let expected = flags.map { flag in
                var fromFile = flag
                fromFile.source = .file
                return fromFile.wireValue
            }
            if served != expected {
                tally.fail(.change, "getAll at revision \(current) differs from the file")
            }
            return
        }
        tally.fail(.change, "no new revision 5 s after the file changed (still \(previous))")
    }
}
