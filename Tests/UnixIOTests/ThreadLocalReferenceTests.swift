import Foundation
import TestSupport
import Testing
import UnixIO

/// Per-thread references in a pthread key.
@Suite(.hangLimit) struct ThreadLocalReferenceTests {
    final class Box: @unchecked Sendable {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    final class WeakBox: @unchecked Sendable {
        weak var box: Box?
    }

    @Test("Each thread sees its own reference, and a thread's is released when the thread exits")
    func perThreadAndReleasedAtExit() async throws {
        let local = ThreadLocalReference<Box>()
        #expect(local.current() == nil)
        local.set(Box(1))
        let weak = WeakBox()
        let done = DispatchSemaphore(value: 0)
        let seen = WeakBox()
        let thread = Thread {
            seen.box = local.current()?.takeUnretainedValue()
            let box = Box(2)
            weak.box = box
            local.set(box)
            done.signal()
        }
        thread.start()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(seen.box == nil)
        #expect(local.current()?.takeUnretainedValue().value == 1)
        // The key's destructor runs as the thread ends, just after the semaphore.
        for _ in 0..<500 where weak.box != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(weak.box == nil)
    }
}
