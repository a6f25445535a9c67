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
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, remaining)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return .timedOut }
            guard fill() else { return .closed }
        }
    }
}
