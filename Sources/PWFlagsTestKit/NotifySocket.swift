import Foundation
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A fake `NOTIFY_SOCKET`: a datagram socket that records every sd_notify message the daemon sends.
///
/// A thread reads the socket all the time, as systemd does. Read only while a test waits, the socket's queue
/// (`net.unix.max_dgram_qlen`, 10 datagrams) fills after a few minutes of `STATUS=` updates, and the daemon's
/// `sd_notify` then blocks for good, holding a descriptor and, at SIGTERM, the shutdown.
public final class NotifySocket: Sendable {
    public let path: String
    private let receiver: Receiver

    public init(path: String) throws {
        self.path = path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket", errno: errno) }
        do {
            let address = try UnixSocketAddress(path: path)
            try syscall("bind(\(path))") { address.withSockaddr { bind(fd, $0, $1) } }
        } catch {
            close(fd)
            throw error
        }
        receiver = Receiver(fd: fd)
        let receiver = self.receiver
        let thread = Thread { receiver.run() }
        thread.name = "notify-socket"
        thread.start()
    }

    deinit {
        // The thread closes the socket once it sees the flag, so its descriptor is never reused under it.
        receiver.stop()
        unlink(path)
    }

    /// Stops reading, as a service manager that hangs would: the socket's queue fills and stays full.
    public func stopReading() {
        receiver.setPaused(true)
    }

    /// Reads again, taking what waited in the queue.
    public func resumeReading() {
        receiver.setPaused(false)
    }

    /// Every message received so far, each a block of `KEY=value` lines.
    public var received: [String] { receiver.messages }

    /// Waits until a message contains `line` (for example `READY=1`) and returns it; nil after `timeout`.
    ///
    /// Ancillary data is not asked for, so any file descriptors a sender passes are closed by the kernel.
    @discardableResult
    public func waitFor(_ line: String, after count: Int = 0, timeout: Duration = .seconds(20)) -> String? {
        receiver.waitFor(
            line, after: count,
            until: Date() + Double(timeout.components.seconds)
                + Double(timeout.components.attoseconds) / 1e18)
    }
}

/// The reading thread's side: the socket, the messages, and a condition that wakes waiters on each one.
private final class Receiver: Sendable {
    let fd: Int32
    private let condition = NSCondition()
    /// Guarded by `condition`.
    nonisolated(unsafe) private var received: [String] = []
    nonisolated(unsafe) private var stopping = false
    nonisolated(unsafe) private var paused = false

    init(fd: Int32) {
        self.fd = fd
    }

    var messages: [String] {
        condition.lock()
        defer { condition.unlock() }
        return received
    }

    func setPaused(_ value: Bool) {
        condition.lock()
        paused = value
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopping = true
        condition.unlock()
    }

    /// Reads datagrams until `stop()`, then closes the socket.
    func run() {
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            condition.lock()
            let done = stopping
            let idle = paused
            condition.unlock()
            if done { return }
            if idle {
                usleep(20_000)
                continue
            }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            let size = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard size > 0 else { continue }
            let text = String(decoding: buffer[0..<size], as: UTF8.self)
            condition.lock()
            received.append(text)
            condition.broadcast()
            condition.unlock()
        }
    }

    func waitFor(_ line: String, after count: Int, until deadline: Date) -> String? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let found = received.dropFirst(count).first(where: {
                $0.split(separator: "\n").contains(Substring(line))
            }) {
                return found
            }
            guard condition.wait(until: deadline) else { return nil }
        }
    }
}
