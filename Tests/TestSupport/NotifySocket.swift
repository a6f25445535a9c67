import Foundation
import Synchronization
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A fake `NOTIFY_SOCKET`: a datagram socket that records every sd_notify message the daemon sends.
public final class NotifySocket: Sendable {
    public let path: String
    private let fd: Int32
    private let messages = Mutex<[String]>([])

    public init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket", errno: errno) }
        let address = try UnixSocketAddress(path: path)
        try syscall("bind(\(path))") { address.withSockaddr { bind(fd, $0, $1) } }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Every message received so far, each a block of `KEY=value` lines.
    public var received: [String] { messages.withLock { $0 } }

    /// Reads every message already queued, without waiting.
    ///
    /// The daemon's `sd_notify` blocks once the socket's queue is full (10 datagrams by default), as it would if
    /// systemd stopped reading: a test that makes the daemon notify many times (reloads) drains it as it goes.
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let size = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard size > 0 else { return }
            let text = String(decoding: buffer[0..<size], as: UTF8.self)
            messages.withLock { $0.append(text) }
        }
    }

    /// Waits until a message contains `line` (for example `READY=1`) and returns it; nil after `timeout`.
    ///
    /// Ancillary data is not asked for, so any file descriptors a sender passes are closed by the kernel.
    @discardableResult
    public func waitFor(_ line: String, after count: Int = 0, timeout: Duration = .seconds(20)) -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let found = messages.withLock({
                $0.dropFirst(count).first { $0.split(separator: "\n").contains(Substring(line)) }
            }) {
                return found
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return nil }
            var pollDescriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(
                min(
                    1000,
                    max(
                        1,
                        remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000))
            )
            guard poll(&pollDescriptor, 1, milliseconds) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let size = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if size > 0 {
                let text = String(decoding: buffer[0..<size], as: UTF8.self)
                messages.withLock { $0.append(text) }
            }
        }
    }
}
