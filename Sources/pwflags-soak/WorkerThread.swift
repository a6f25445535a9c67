import Dispatch
import Foundation
import Synchronization

/// A named thread that runs one loop until asked to stop, and lets the caller wait for it to finish.
final class WorkerThread: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// True once `stop()` was called: the loop checks it between steps.
    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Runs `body` on a new thread called `name`.
    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let finished = self.finished
        let thread = Thread {
            body()
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Asks the loop to stop and waits for it, at most 15 s.
    func stop() {
        stopping.store(true, ordering: .releasing)
        _ = finished.wait(timeout: .now() + .seconds(15))
    }
}
