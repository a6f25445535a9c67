import FlagsCore
import FlagsProtocol
import Foundation
import Synchronization
import TestSupport
import Testing
import UnixIO

@testable import FeatureFlags

/// The mirror behind its lock, written by two threads at once (the subscriber and a refresh on the command
/// queue): what `get` reads never goes back to an older snapshot.
@Suite(.hangLimit) struct MirrorStoreTests {
    static func flag(_ revision: Int) -> Flag {
        Flag(key: "v", isEnabled: true, ruleId: "r\(revision)")
    }

    static func revision(of flag: Flag?) -> Int {
        flag.flatMap { Int($0.ruleId.dropFirst()) } ?? -1
    }

    /// Shared by the writer threads.
    final class Race: Sendable {
        let next = Atomic<Int>(1)
        let regressions = Locked<[String]>([])
        let done = DispatchSemaphore(value: 0)
    }

    @Test("Two writers racing: after an update returns, get reads that revision or a newer one, never an older")
    func publishedSnapshotsNeverGoBack() throws {
        let store = MirrorStore()
        store.update { $0.subscribed(to: FlagListing(revision: 0, flags: [Self.flag(0)]), expiresAt: nil) }
        let race = Race()
        let updates = 300_000
        for writer in 0..<2 {
            Thread {
                defer { race.done.signal() }
                var previous = -1
                while true {
                    let revision = race.next.add(1, ordering: .relaxed).oldValue
                    guard revision <= updates else { return }
                    if writer == 0 {
                        let change = FlagsChanged(
                            subscription: "s1", revision: revision, changed: [Self.flag(revision)], removed: [])
                        store.update { $0.apply(change) }
                    } else {
                        let listing = FlagListing(revision: revision, flags: [Self.flag(revision)])
                        store.update { $0.applyRefresh(listing, generation: 1, expiresAt: nil) }
                    }
                    // The mirror holds `revision` or a newer one now; what get reads must be as new.
                    let seen = Self.revision(of: store.flag("v")?.flag)
                    let mirrored = Self.revision(of: store.current.flags["v"])
                    if seen < previous || seen < min(revision, mirrored) {
                        race.regressions.withLock { $0.append("wrote \(revision), read \(seen) after \(previous)") }
                    }
                    previous = seen
                }
            }.start()
        }
        for _ in 0..<2 { #expect(race.done.wait(timeout: .now() + 60) == .success, "a racing thread never ended") }
        let regressions = race.regressions.withLock { $0 }
        #expect(regressions.isEmpty, "\(regressions.count): \(regressions.prefix(5))")
        #expect(Self.revision(of: store.flag("v")?.flag) == Self.revision(of: store.current.flags["v"]))
    }

    @Test("R2: get tells canonically equivalent keys apart, as the daemon does: \"caf\\u{E9}\" and \"cafe\\u{301}\"")
    func getTellsEquivalentKeysApart() {
        let store = MirrorStore()
        let precomposed = Flag(key: "caf\u{E9}", isEnabled: true, ruleId: "r_precomposed")
        let decomposed = Flag(key: "cafe\u{301}", isEnabled: false, ruleId: "r_decomposed")
        store.update { $0.subscribed(to: FlagListing(revision: 1, flags: [precomposed, decomposed]), expiresAt: nil) }
        #expect(store.flag("caf\u{E9}")?.flag.ruleId == "r_precomposed")
        #expect(store.flag("cafe\u{301}")?.flag.ruleId == "r_decomposed")
    }
}
