import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// Reads newline-terminated lines (or messages ended by another byte, Varlink's NUL) from a descriptor with a
/// timeout, by `poll`, never by sleeping.
public final class LineReader {
    public let fd: Int32
    /// The byte that ends each line.
    public let terminator: UInt8
    private var buffer: [UInt8] = []

    /// Reads from `fd`, which the caller keeps open and closes.
    public init(fd: Int32, terminator: UInt8 = UInt8(ascii: "\n")) {
        self.fd = fd
        self.terminator = terminator
    }

    /// The next line, without its newline; nil when the descriptor reached its end or `timeout` passed.
    public func readLine(timeout: Duration = .seconds(10)) -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let newline = buffer.firstIndex(of: terminator) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            guard Self.waitReadable(fd, until: deadline) else { return nil }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// True when the peer of `fd` closed the connection within `timeout`; what it sends first is read and dropped.
    public static func isClosedByPeer(_ fd: Int32, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while waitReadable(fd, until: deadline) {
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { raw in
                try? syscall("read") { read(fd, raw.baseAddress, raw.count) }
            }
            if (count ?? 0) <= 0 { return true }
        }
        return false
    }

    /// True when `fd` has input (or its end) before `deadline`.
    ///
    /// False at once when the calling task is cancelled, as a test past its time limit is: its waits then end
    /// one after another instead of each running to its own deadline. Hence the slices of at most 100 ms.
    static func waitReadable(_ fd: Int32, until deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero, !Task.isCancelled else { return false }
            let milliseconds =
                remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000
            if Descriptor.waitReadable(fd, milliseconds: Int32(min(milliseconds + 1, 100))) { return true }
        }
    }
}
