import TestSupport
import Testing
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// The one EINTR-retrying helper.
@Suite(.hangLimit) struct SyscallTests {
    @Test("A call interrupted by a signal is made again, and its result returned")
    func retriesInterruptedCalls() throws {
        var attempts = 0
        let result = try syscall("test") { () -> Int32 in
            attempts += 1
            if attempts < 3 {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == 7)
        #expect(attempts == 3)
    }

    @Test("Any other failure throws an error naming the call and its errno, after one attempt")
    func throwsOtherFailures() {
        var attempts = 0
        #expect(throws: SystemError("open(/nowhere)", errno: ENOENT)) {
            try syscall("open(/nowhere)") { () -> Int32 in
                attempts += 1
                errno = ENOENT
                return -1
            }
        }
        #expect(attempts == 1)
    }
}
