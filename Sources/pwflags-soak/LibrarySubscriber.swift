import FeatureFlags
import FlagsCore
import FlagsProtocol
import PWFlagsTestKit
import Synchronization
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A `FeatureFlags` client library instance: its mirror must end equal to `getAll`.
final class LibrarySubscriber: SoakSubscriber {
    let name: String
    private let flags: FeatureFlags
    private let isClosed = Atomic<Bool>(false)

    init(name: String, socketPath: String) {
        self.name = name
        flags = FeatureFlags(socketPath: socketPath)
    }

    /// Waits until the mirror holds its first snapshot (its one connection is then open); false on timeout.
    func waitForSnapshot() -> Bool {
        let deadline = MonotonicClock.nanoseconds() + 15_000_000_000
        while !flags.hasSnapshot {
            guard MonotonicClock.nanoseconds() < deadline else { return false }
            usleep(2_000)
        }
        return true
    }

    var connections: Int {
        isClosed.load(ordering: .acquiring) ? 0 : 1
    }

    func close() {
        flags.stop()
        isClosed.store(true, ordering: .releasing)
    }

    func difference(from final: FinalFlags) -> String? {
        var mirror: [String: JSONValue] = [:]
        for flag in flags.all { mirror[flag.key] = flag.flag.wireValue }
        guard mirror != final.byKey else { return nil }
        let differing = Set(mirror.keys).union(final.byKey.keys).filter { mirror[$0] != final.byKey[$0] }
        return "\(name): the mirror differs from getAll at revision \(final.revision) in \(differing.count) flags"
            + (differing.min().map { " (first: \($0))" } ?? "")
    }

    func verifyStates(against history: FlagHistory, tally: Tally) -> (checked: Int, unknown: Int) {
        // The mirror does not show its revision: only its final state is checked, by `difference(from:)`.
        (0, 0)
    }
}
