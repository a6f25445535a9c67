import FlagsCore
import Foundation
import TestSupport
import Testing
import UnixIO

@testable import FlagsDaemon

/// The store tells its observers outside the lock its readers take: the loop thread's read of the snapshot never
/// waits for an observer, and observers hear every update in revision order.
@Suite(.hangLimit) struct FlagStoreObserverTests {
    @Test("A reader on another thread gets the snapshot while an observer is still being told of it")
    func readersDoNotWaitForObservers() {
        let store = FlagStore()
        let readDuringObserver = Locked<Int?>(nil)
        _ = store.observe { update in
            // Stands for the socket loop reading `current` while the observer runs; a deadline bounds the wait so
            // that a store that holds its lock here fails the test instead of hanging it.
            let read = DispatchSemaphore(value: 0)
            let revision = Locked<Int?>(nil)
            Thread.detachNewThread {
                revision.withLock { $0 = store.current.revision }
                read.signal()
            }
            if read.wait(timeout: .now() + 5) == .success {
                readDuringObserver.withLock { $0 = revision.withLock { $0 } }
            }
        }
        store.replace(with: FlagSet([Flag(key: "a", isEnabled: true, ruleId: "r1")]))
        #expect(readDuringObserver.withLock { $0 } == 1)
    }

    @Test("Observers hear concurrent changes once each, in revision order")
    func updatesArriveInRevisionOrder() async {
        let store = FlagStore()
        let revisions = Locked<[Int]>([])
        _ = store.observe { update in revisions.withLock { $0.append(update.snapshot.revision) } }
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<8 {
                group.addTask {
                    for step in 0..<25 {
                        store.setOverride(FlagOverride(key: "k\(index)", isEnabled: step % 2 == 0))
                    }
                }
            }
        }
        let seen = revisions.withLock { $0 }
        #expect(seen == Array(1...seen.count))
        #expect(seen.count == store.current.revision)
    }
}
