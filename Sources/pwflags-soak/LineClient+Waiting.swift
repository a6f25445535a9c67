import PWFlagsTestKit
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

extension LineClient {
    /// The next line, waiting at most `milliseconds` for it (0: only what has already arrived).
    func nextLine(waiting milliseconds: Int32) -> LineWait {
        let deadline = MonotonicClock.nanoseconds() + UInt64(milliseconds) * 1_000_000
        while true {
            if hasBufferedLine, let text = readText() { return .line(text) }
            let now = MonotonicClock.nanoseconds()
            let remaining = now < deadline ? Int32((deadline - now) / 1_000_000) : 0
            // An interrupted wait reads as nothing yet: the loop computes the time left.
            guard Descriptor.waitReadable(fd, milliseconds: remaining) else {
                if MonotonicClock.nanoseconds() < deadline { continue }
                return .timedOut
            }
            guard fill() else { return .closed }
        }
    }
}
