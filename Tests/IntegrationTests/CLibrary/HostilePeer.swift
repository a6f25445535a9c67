import Foundation
import Synchronization
import TestSupport
import UnixIO

#if canImport(Glibc)
    import Glibc
#endif

/// A socket server that pretends to be the daemon and misbehaves, for the C library's hostile-peer tests.
final class HostilePeer: Sendable {
    enum Behaviour: Sendable {
        /// Lines that are not JSON, JSON that is not an answer, an answer to no request.
        case garbage
        /// One line that never ends: 64 KiB writes for as long as the client reads.
        case endlessLine
        /// One 12 MiB line (under the line limit) that is an array of a million numbers: the reader's arena limit.
        case hugeLine
        /// Accepts and never reads nor answers.
        case notReading
    }

    /// `[1,1,…,1]`, 12 MiB and one newline.
    static let hugeLine = "[" + String(repeating: "1,", count: 6 << 20) + "1]\n"

    let path: String
    private let listenFD: Int32
    private let behaviour: Behaviour
    private let accepted = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let finished = Mutex<Bool>(false)

    /// Connections accepted so far: more than one means the client came back after being cut off.
    var connections: Int { accepted.load(ordering: .acquiring) }

    init(at path: String, behaviour: Behaviour) throws {
        self.path = path
        self.behaviour = behaviour
        listenFD = try UnixSocket.listen(at: path, mode: 0o600)
        Thread.detachNewThread { [self] in
            run()
            finished.withLock { $0 = true }
        }
    }

    func stop() {
        stopping.store(true, ordering: .releasing)
        let deadline = ContinuousClock.now + .seconds(10)
        while !finished.withLock({ $0 }), ContinuousClock.now < deadline { usleep(2_000) }
        close(listenFD)
        unlink(path)
    }

    private func run() {
        var held: [Int32] = []
        while !stopping.load(ordering: .acquiring) {
            guard Descriptor.waitReadable(listenFD, milliseconds: 100), let fd = try? UnixSocket.accept(listenFD) else {
                continue
            }
            accepted.add(1, ordering: .releasing)
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            switch behaviour {
            case .garbage:
                send(
                    fd,
                    "\u{1}\u{ff}garbage\n{\"id\":1,\"result\":\n[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n"
                )
                send(fd, "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}\n{\"method\":\"flagsChanged\",\"params\":7}\n")
                close(fd)
            case .endlessLine:
                let chunk = String(repeating: "a", count: 65536)
                var sent = 0
                while sent < 64 << 20, send(fd, chunk) { sent += chunk.utf8.count }
                close(fd)
            case .hugeLine:
                send(fd, Self.hugeLine)
                close(fd)
            case .notReading:
                held.append(fd)
            }
        }
        for fd in held { close(fd) }
    }

    /// Writes all of `text`; false once the peer is gone or stopped reading for 2 s.
    @discardableResult
    private func send(_ fd: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}
